// --since/--until values: durations before now, local and zoned times,
// dates, named days.

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <regex>
#include <string>

#include "ctl/query/time_filter.hpp"
#include "proto/timestamp.hpp"
#include "tests/support/process.hpp"

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

// Durations as journalctl takes them: "-SPAN" or "SPAN ago" (a bare "30s"
// was accepted before issue 26; journalctl refuses it, and so does this).
TEST(Trace2ctlTimeFilter, DurationsCountBackFromNow) {
  const std::int64_t now = *proto::parse_utc_timestamp("2026-11-21T12:00:00Z");
  EXPECT_EQ(parse_time("-30s", now), now - 30 * k_second);
  EXPECT_EQ(parse_time("-10m", now), now - 600 * k_second);
  EXPECT_EQ(parse_time("-10min", now), now - 600 * k_second);
  EXPECT_EQ(parse_time("-2h", now), now - 7200 * k_second);
  EXPECT_EQ(parse_time("-3d", now), now - 3 * 86400 * k_second);
  EXPECT_EQ(parse_time("-1w", now), now - 7 * 86400 * k_second);
  EXPECT_EQ(parse_time("-0m", now), now);
  EXPECT_EQ(parse_time("-1.5h", now), now - 5400 * k_second);
  EXPECT_EQ(parse_time("-.5h", now), now - 1800 * k_second);
  EXPECT_EQ(parse_time("-0.25s", now), now - k_second / 4);
  EXPECT_EQ(parse_time("1h ago", now), now - 3600 * k_second);
  EXPECT_EQ(parse_time("5min ago", now), now - 300 * k_second);
  EXPECT_EQ(parse_time("1h 30min ago", now), now - 5400 * k_second);
  EXPECT_EQ(parse_time("-1h30min", now), now - 5400 * k_second);
  EXPECT_EQ(parse_time("-1 hours", now), now - 3600 * k_second);
  EXPECT_EQ(parse_time("90 ago", now), now - 90 * k_second);
  EXPECT_EQ(parse_time("-1M", now), now - 2629800 * k_second);
  EXPECT_EQ(parse_time("-1y", now), now - 31557600 * k_second);
  EXPECT_EQ(parse_time("-250ms", now), now - k_second / 4);
  EXPECT_EQ(parse_time("+5min", now), now + 300 * k_second);
  EXPECT_EQ(parse_time("5min left", now), now + 300 * k_second);
  // Longer ago than the epoch: everything.
  EXPECT_EQ(parse_time("-999999999999999999d", now), 0);
}

TEST(Trace2ctlTimeFilter, EpochSeconds) {
  EXPECT_EQ(text_of("@1795772196"), "2026-11-27T09:36:36.000000Z");
  EXPECT_EQ(text_of("@1795772196.25"), "2026-11-27T09:36:36.250000Z");
  EXPECT_EQ(text_of("@0"), "1970-01-01T00:00:00.000000Z");
}

TEST(Trace2ctlTimeFilter, BareDurationsAreRefusedWithTheFormsThatMeanThem) {
  for (const char* text : {"1h", "30s", "10m", "1.5h", "3d", "10"}) {
    EXPECT_FALSE(parse_time(text, 1'000'000'000 * k_second).has_value()) << text;
    const std::string message = describe_time_error(text);
    EXPECT_NE(message.find(std::string("'-") + text + "' or '" + text + " ago'"), std::string::npos) << message;
  }
}

TEST(Trace2ctlTimeFilter, ZonedTimesAndUtc) {
  const ZoneGuard zone("Europe/Berlin");
  EXPECT_EQ(text_of("2026-11-21T10:00:00Z"), "2026-11-21T10:00:00.000000Z");
  EXPECT_EQ(text_of("2026-11-21T10:00:00.25Z"), "2026-11-21T10:00:00.250000Z");
  EXPECT_EQ(text_of("2026-11-21 17:00+01:00"), "2026-11-21T16:00:00.000000Z");
  EXPECT_EQ(text_of("2026-11-21T17:00:00-0500"), "2026-11-21T22:00:00.000000Z");
  EXPECT_EQ(text_of("2026-11-21 17:00+01"), "2026-11-21T16:00:00.000000Z");
  EXPECT_EQ(text_of("2026-11-21 10:00 UTC"), "2026-11-21T10:00:00.000000Z");
  EXPECT_EQ(text_of("2026-11-21 UTC"), "2026-11-21T00:00:00.000000Z");
  const std::int64_t now = *proto::parse_utc_timestamp("2026-11-21T23:34:56Z");  // the 22nd in Berlin
  EXPECT_EQ(text_of("today UTC", now), "2026-11-21T00:00:00.000000Z");
  EXPECT_EQ(text_of("17:00 UTC", now), "2026-11-21T17:00:00.000000Z");
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
  // One-digit fields, a two-digit year, as strptime (and journalctl) read them.
  EXPECT_EQ(text_of("7:00", now), "2026-11-21T06:00:00.000000Z");
  EXPECT_EQ(text_of("2026-1-5"), "2026-01-04T23:00:00.000000Z");
  EXPECT_EQ(text_of("26-11-21 7:05"), "2026-11-21T06:05:00.000000Z");
}

TEST(Trace2ctlTimeFilter, RejectsEverythingElse) {
  const ZoneGuard zone("UTC");
  for (const char* text : {"", "m", "10", "10x", "-5x", "5 m", "1.h", "-1.h", ".5h", "-1e3s", "-infs", "-1H",
                           "yesterdays", "-", "+", " ago", "@", "@12a", "@1795772196.", "now UTC", "today ",
                           " -1h", "2026-13-01", "2026-02-30", "2026-11-21 25:00", "2026-11-21 17:60",
                           "2026-11-21T10:00:00+25:00", "2026-11-21 10:00:00Zjunk", "2026-11-21 10:00Z UTC",
                           "2026/11/21", "2026-11-21 17"}) {
    EXPECT_FALSE(parse_time(text, 1'000'000'000 * k_second).has_value()) << text;
    EXPECT_FALSE(describe_time_error(text).empty()) << text;
  }
  EXPECT_TRUE(describe_time_error("-10m").empty());
  EXPECT_NE(describe_time_error("soon").find("yesterday"), std::string::npos) << "the message lists the forms";
}

// What systemd itself makes of `text` (the parser journalctl --since uses),
// in the current TZ: microseconds since the epoch, nullopt when it refuses
// it; no value at all when systemd-analyze cannot be run.
std::optional<std::optional<std::int64_t>> systemd_reading(const std::string& text) {
  test::ProcessSpec spec;
  spec.argv = {"systemd-analyze", "timestamp", "--", text};
  const test::ProcessResult r = test::run_process(spec);
  std::smatch match;
  static const std::regex k_unix(R"(UNIX seconds: @(\d+)(?:\.(\d{6}))?)");
  if (r.exit_code == 0 && std::regex_search(r.out, match, k_unix)) {
    return std::optional<std::int64_t>(std::stoll(match[1]) * k_second +
                                       (match[2].matched ? std::stoll(match[2]) : 0));
  }
  if (r.err.find("Failed to parse") != std::string::npos) {
    return std::optional<std::int64_t>();
  }
  return std::nullopt;  // not installed, or no systemd to ask
}

// Every form journalctl's documentation shows, and the ones it refuses,
// against systemd's own reading where systemd-analyze is installed: the
// same times (relative ones within the seconds between the two readings),
// the same refusals. The ISO 8601 forms git writes ("T", "Z", "+01:00"),
// which systemd before 255 refuses, are kept apart (tested above).
TEST(Trace2ctlTimeFilter, ReadsTimesAsSystemdDoes) {
  const ZoneGuard zone("America/New_York");
  if (!systemd_reading("now").has_value()) {
    GTEST_SKIP() << "systemd-analyze is not available here";
  }
  const std::vector<std::string> texts{
      "-1h", "1h ago", "5min ago", "+5min", "-1.5h", "-.5h", "1h 30min ago", "-1h30min", "-1 hours", "90 ago",
      "-1M", "-2w", "-3d", "-1y", "-250ms", "5min left", "@1795772196", "@1795772196.25", "@0", "yesterday",
      "today", "tomorrow", "yesterday UTC", "2026-11-23", "2026-11-23 17:00", "2026-11-23 17:00:05",
      "2026-11-23 17:00:05.123", "2026-11-23 17:00 UTC", "26-11-23", "2026-1-5", "17:00", "17:00:05", "7:00",
      "17:00 UTC",
      // refused by both
      "1h", "5min", "10", "30s", "1.h", "-1H", "-1e3s", "@", "@12a", "now UTC", "today ", " -1h", "-", "1h ago ",
      "2026-11-23 17:60", "2026-11-23 25:00", "2026-11-23 17", "Tomorrow"};
  for (const std::string& text : texts) {
    const std::int64_t now = proto::unix_now_us();
    const std::optional<std::int64_t> ours = parse_time(text, now);
    const std::optional<std::optional<std::int64_t>> theirs = systemd_reading(text);
    ASSERT_TRUE(theirs.has_value()) << text;
    ASSERT_EQ(ours.has_value(), theirs->has_value()) << "'" << text << "': systemd "
                                                     << (theirs->has_value() ? "accepts" : "refuses") << " it";
    if (ours) {
      const bool relative = text.find_first_of("+-") == 0 || text.ends_with(" ago") || text.ends_with(" left");
      const std::int64_t tolerance = relative ? 5 * k_second : 0;
      EXPECT_LE(std::llabs(*ours - **theirs), tolerance)
          << "'" << text << "': " << time_as_text(*ours) << " against systemd's " << time_as_text(**theirs);
    }
  }
}

}  // namespace
}  // namespace trace2d::ctl
