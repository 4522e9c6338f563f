// --since values: durations before now, absolute UTC times, dates.

#include <gtest/gtest.h>

#include "ctl/query/time_filter.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

constexpr std::int64_t k_second = 1'000'000;

TEST(Trace2ctlTimeFilter, DurationsCountBackFromNow) {
  const std::int64_t now = *proto::parse_utc_timestamp("2026-11-21T12:00:00Z");
  EXPECT_EQ(parse_since("30s", now), now - 30 * k_second);
  EXPECT_EQ(parse_since("10m", now), now - 600 * k_second);
  EXPECT_EQ(parse_since("2h", now), now - 7200 * k_second);
  EXPECT_EQ(parse_since("3d", now), now - 3 * 86400 * k_second);
  EXPECT_EQ(parse_since("1w", now), now - 7 * 86400 * k_second);
  EXPECT_EQ(parse_since("0m", now), now);
  // Longer ago than the epoch: everything.
  EXPECT_EQ(parse_since("999999999999999999d", now), 0);
}

TEST(Trace2ctlTimeFilter, AbsoluteTimesAndDates) {
  EXPECT_EQ(since_as_text(*parse_since("2026-11-21T10:00:00Z", 0)), "2026-11-21T10:00:00.000000Z");
  EXPECT_EQ(since_as_text(*parse_since("2026-11-21T10:00:00.25Z", 0)),
            "2026-11-21T10:00:00.250000Z");
  EXPECT_EQ(since_as_text(*parse_since("2026-11-21", 0)), "2026-11-21T00:00:00.000000Z");
}

TEST(Trace2ctlTimeFilter, RejectsEverythingElse) {
  for (const char* text : {"", "m", "10", "10x", "-5m", "5 m", "1.5h", "yesterday",
                           "2026-11-21T10:00:00", "2026-13-01", "2026-11-21 10:00:00Z"}) {
    EXPECT_FALSE(parse_since(text, 1'000'000'000 * k_second).has_value()) << text;
    EXPECT_FALSE(describe_since_error(text).empty()) << text;
  }
  EXPECT_TRUE(describe_since_error("10m").empty());
}

}  // namespace
}  // namespace trace2d::ctl
