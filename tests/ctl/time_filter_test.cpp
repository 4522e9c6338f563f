// --since/--until values: durations before now, local and zoned times,
// dates, named days.

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>

#include "ctl/query/time_filter.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

constexpr std::int64_t k_second = 1'000'000;

// Sets TZ for one test and restores it after: local times depend on it.
class ZoneGuard {
 public:
  explicit ZoneGuard(const char* zone) {
    if (const char* old = std::getenv("TZ"); old != nullptr) {
      m_old = old;
    }
    ::setenv("TZ", zone, 1);
    ::tzset();
  }
  ZoneGuard(const ZoneGuard&) = delete;
  ZoneGuard& operator=(const ZoneGuard&) = delete;
  ~ZoneGuard() {
    if (m_old) {
      ::setenv("TZ", m_old->c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }

 private:
  std::optional<std::string> m_old;
};

std::string text_of(std::string_view input, std::int64_t now = 0) {
  const auto us = parse_time(input, now);
  return us ? time_as_text(*us) : std::string("invalid");
}

TEST(Trace2ctlTimeFilter, DurationsCountBackFromNow) {
  const std::int64_t now = *proto::parse_utc_timestamp("2026-11-21T12:00:00Z");
  EXPECT_EQ(parse_time("30s", now), now - 30 * k_second);
  EXPECT_EQ(parse_time("10m", now), now - 600 * k_second);
  EXPECT_EQ(parse_time("2h", now), now - 7200 * k_second);
  EXPECT_EQ(parse_time("3d", now), now - 3 * 86400 * k_second);
  EXPECT_EQ(parse_time("1w", now), now - 7 * 86400 * k_second);
  EXPECT_EQ(parse_time("0m", now), now);
  EXPECT_EQ(parse_time("1.5h", now), now - 5400 * k_second);
  EXPECT_EQ(parse_time("0.25s", now), now - k_second / 4);
  // Longer ago than the epoch: everything.
  EXPECT_EQ(parse_time("999999999999999999d", now), 0);
}

TEST(Trace2ctlTimeFilter, ZonedTimesAndUtc) {
  const ZoneGuard zone("Europe/Berlin");
  EXPECT_EQ(text_of("2026-11-21T10:00:00Z"), "2026-11-21T10:00:00.000000Z");
  EXPECT_EQ(text_of("2026-11-21T10:00:00.25Z"), "2026-11-21T10:00:00.250000Z");
  EXPECT_EQ(text_of("2026-11-21 17:00+01:00"), "2026-11-21T16:00:00.000000Z");
  EXPECT_EQ(text_of("2026-11-21T17:00:00-0500"), "2026-11-21T22:00:00.000000Z");
  EXPECT_EQ(text_of("2026-11-21 17:00+01"), "2026-11-21T16:00:00.000000Z");
}

TEST(Trace2ctlTimeFilter, TimesWithoutAZoneAreLocal) {
  const ZoneGuard zone("Europe/Berlin");  // UTC+1 in November, UTC+2 in July
  EXPECT_EQ(text_of("2026-11-21"), "2026-11-20T23:00:00.000000Z");
  EXPECT_EQ(text_of("2026-11-21 17:00"), "2026-11-21T16:00:00.000000Z");
  EXPECT_EQ(text_of("2026-07-01T17:00:30.5"), "2026-07-01T15:00:30.500000Z");
  const std::int64_t now = *proto::parse_utc_timestamp("2026-11-21T12:34:56Z");  // 13:34:56 local
  EXPECT_EQ(text_of("17:00", now), "2026-11-21T16:00:00.000000Z");
  EXPECT_EQ(text_of("today", now), "2026-11-20T23:00:00.000000Z");
  EXPECT_EQ(text_of("yesterday", now), "2026-11-19T23:00:00.000000Z");
  EXPECT_EQ(text_of("tomorrow", now), "2026-11-21T23:00:00.000000Z");
  EXPECT_EQ(text_of("now", now), "2026-11-21T12:34:56.000000Z");
}

TEST(Trace2ctlTimeFilter, RejectsEverythingElse) {
  const ZoneGuard zone("UTC");
  for (const char* text : {"", "m", "10", "10x", "-5m", "5 m", "1.h", ".5h", "1e3s", "infs", "yesterdays",
                           "2026-13-01", "2026-02-30", "2026-11-21 25:00", "2026-11-21T10:00:00+25:00",
                           "2026-11-21 10:00:00Zjunk", "2026/11/21", "7:00"}) {
    EXPECT_FALSE(parse_time(text, 1'000'000'000 * k_second).has_value()) << text;
    EXPECT_FALSE(describe_time_error(text).empty()) << text;
  }
  EXPECT_TRUE(describe_time_error("10m").empty());
  EXPECT_NE(describe_time_error("soon").find("yesterday"), std::string::npos) << "the message lists the forms";
}

}  // namespace
}  // namespace trace2d::ctl
