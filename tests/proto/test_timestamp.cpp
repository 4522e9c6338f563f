// Trace2 "time" values (proto/timestamp.hpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "proto/timestamp.hpp"

namespace proto = trace2d::proto;

namespace {

constexpr std::int64_t k_us_per_day = 86'400'000'000;

}  // namespace

TEST(Timestamp, ParsesGitsFormat) {
  // From a real version event.
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.565683Z"), 1795305061565683);
  EXPECT_EQ(proto::parse_utc_timestamp("1970-01-01T00:00:00.000000Z"), 0);
  EXPECT_EQ(proto::parse_utc_timestamp("1970-01-01T00:00:00.000001Z"), 1);
  EXPECT_EQ(proto::parse_utc_timestamp("1970-01-02T00:00:00.000000Z"), k_us_per_day);
  EXPECT_EQ(proto::parse_utc_timestamp("2000-02-29T12:00:00.000000Z"), 951825600000000);
  EXPECT_EQ(proto::parse_utc_timestamp("9999-12-31T23:59:59.999999Z"), proto::k_max_timestamp_us);
}

TEST(Timestamp, FractionOfZeroToNineDigits) {
  const std::int64_t base = *proto::parse_utc_timestamp("2026-11-21T23:51:01Z");
  EXPECT_EQ(base, 1795305061000000);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.5Z"), base + 500000);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.56Z"), base + 560000);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.565Z"), base + 565000);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.5656Z"), base + 565600);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.56568Z"), base + 565680);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.565683Z"), base + 565683);
  // Beyond microseconds: truncated, not rounded.
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.5656839Z"), base + 565683);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.56568399Z"), base + 565683);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.999999999Z"), base + 999999);
  // Ten digits is too many; a dot needs at least one.
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-11-21T23:51:01.5656839999Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-11-21T23:51:01.Z").has_value());
}

TEST(Timestamp, CalendarRules) {
  EXPECT_TRUE(proto::parse_utc_timestamp("2024-02-29T00:00:00.000000Z").has_value());   // leap
  EXPECT_FALSE(proto::parse_utc_timestamp("2023-02-29T00:00:00.000000Z").has_value());  // not leap
  EXPECT_TRUE(proto::parse_utc_timestamp("2000-02-29T00:00:00.000000Z").has_value());   // /400
  EXPECT_FALSE(proto::parse_utc_timestamp("2100-02-29T00:00:00.000000Z").has_value());  // /100
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-02-30T00:00:00.000000Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-04-31T00:00:00.000000Z").has_value());
  EXPECT_TRUE(proto::parse_utc_timestamp("2026-12-31T00:00:00.000000Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-12-32T00:00:00.000000Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-13-01T00:00:00.000000Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-00-01T00:00:00.000000Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-01-00T00:00:00.000000Z").has_value());
  EXPECT_TRUE(proto::parse_utc_timestamp("2026-01-01T23:59:59.999999Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-01-01T24:00:00.000000Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-01-01T00:60:00.000000Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("2026-01-01T00:00:61.000000Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("1969-12-31T23:59:59.999999Z").has_value());
  EXPECT_FALSE(proto::parse_utc_timestamp("0000-01-01T00:00:00.000000Z").has_value());
}

TEST(Timestamp, RejectsOtherShapes) {
  for (const char* text : {
           "",
           "2026",
           "2026-11-21",
           "2026-11-21T23:51:01.565683",         // no zone
           "2026-11-21 23:51:01.565683Z",        // space separator
           " 2026-11-21T23:51:01.565683Z",
           "2026-11-21T23:51:01.565683Z ",
           "2026-11-21T23:51:01.565683ZZ",
           "2026-11-21T23:51:01.565683Z+00:00",  // zone twice, Z first
           "2026-11-21T23:51:01.565683+01:00Z",  // an offset and Z disagree
           "2026-11-21T23:51:01.565683+1:00",    // one-digit hour
           "2026-11-21T23:51:01.565683+01:0",
           "2026-11-21T23:51:01.565683+01:",
           "2026-11-21T23:51:01.565683+",
           "2026-11-21T23:51:01.565683+24:00",   // no such offset
           "2026-11-21T23:51:01.565683+01:60",
           "2026-11-21T23:51:01.565683+010",
           "2026-11-21T23:51:01.565683+01:00:00",
           "2026-11-21T23:51:01.565683 +01:00",
           "2026-11-21T23:51:01.565683UTC",
           "2026-1-21T23:51:01.565683Z",
           "2026-11-21T3:51:01.565683Z",
           "+2026-11-21T23:51:01.565683Z",
           "20261121T235101.565683Z",            // basic format, as in SIDs
           "2026-11-21T23:51:01.-565683Z",
           "2026-11-21T23:51:01.56x683Z",
           "2026/11/21T23:51:01.565683Z",
           "2026-11-21T23-51-01.565683Z",
           "2026-11-2aT23:51:01.565683Z",
           "10000-01-01T00:00:00.000000Z",
       }) {
    EXPECT_FALSE(proto::parse_utc_timestamp(text).has_value()) << '"' << text << '"';
  }
}

// What producers other than git write (docs/trace2-format.md).
TEST(Timestamp, OtherProducersZones) {
  const std::int64_t utc = *proto::parse_utc_timestamp("2026-11-21T23:51:01.565683Z");
  // repo: Python's isoformat() of an aware UTC time, then "Z"; no fraction
  // at all when the microseconds are 0.
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.565683+00:00Z"), utc);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01+00:00Z"), utc - 565683);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01-00:00Z"), utc - 565683);
  // Git Credential Manager: .NET DateTimeOffset, 7 digits (100 ns ticks,
  // trailing zeros dropped) and an offset.
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.5656839+00:00"), utc);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01.56568+00:00"), utc - 3);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01+00:00"), utc - 565683);
  // Any other offset is converted to UTC, east positive.
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-22T00:51:01.565683+01:00"), utc);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-22T05:21:01.565683+05:30"), utc);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T19:21:01.565683-04:30"), utc);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T19:21:01.565683-0430"), utc);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T20:51:01.565683-03"), utc);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-22T23:50:01.565683+23:59"), utc);
  // RFC 3339 allows lowercase "t" and "z", ISO 8601 a decimal comma.
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21t23:51:01.565683z"), utc);
  EXPECT_EQ(proto::parse_utc_timestamp("2026-11-21T23:51:01,565683Z"), utc);
}

TEST(Timestamp, OffsetsCrossDaysAndTheRange) {
  // The local date is not the UTC date.
  EXPECT_EQ(proto::parse_utc_timestamp("2025-01-01T00:30:00+01:00"),
            proto::parse_utc_timestamp("2024-12-31T23:30:00Z"));
  EXPECT_EQ(proto::parse_utc_timestamp("2024-02-28T23:00:00-02:00"),
            proto::parse_utc_timestamp("2024-02-29T01:00:00Z"));
  // The range applies to the UTC time, not to the local one.
  EXPECT_EQ(proto::parse_utc_timestamp("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_FALSE(proto::parse_utc_timestamp("1970-01-01T00:30:00+01:00").has_value());
  EXPECT_EQ(proto::parse_utc_timestamp("1969-12-31T23:00:00-01:00"), 0);
  EXPECT_EQ(proto::parse_utc_timestamp("9999-12-31T23:59:59.999999+00:00"), proto::k_max_timestamp_us);
  EXPECT_FALSE(proto::parse_utc_timestamp("9999-12-31T23:00:00-01:00").has_value());
}

TEST(Timestamp, LeapSecondFoldsIntoItsMinute) {
  const std::int64_t last = *proto::parse_utc_timestamp("2016-12-31T23:59:59.999999Z");
  EXPECT_EQ(proto::parse_utc_timestamp("2016-12-31T23:59:60Z"), last);
  EXPECT_EQ(proto::parse_utc_timestamp("2016-12-31T23:59:60.5Z"), last);
  EXPECT_EQ(proto::parse_utc_timestamp("2017-01-01T00:59:60+01:00"), last);
  EXPECT_LT(*proto::parse_utc_timestamp("2016-12-31T23:59:60Z"),
            *proto::parse_utc_timestamp("2017-01-01T00:00:00Z"));
}

TEST(Timestamp, FormatsGitsFormat) {
  EXPECT_EQ(proto::format_utc_timestamp(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(proto::format_utc_timestamp(1), "1970-01-01T00:00:00.000001Z");
  EXPECT_EQ(proto::format_utc_timestamp(1795305061565683), "2026-11-21T23:51:01.565683Z");
  EXPECT_EQ(proto::format_utc_timestamp(951825600000000), "2000-02-29T12:00:00.000000Z");
  EXPECT_EQ(proto::format_utc_timestamp(proto::k_max_timestamp_us), "9999-12-31T23:59:59.999999Z");
  std::string out = "time=";
  proto::append_utc_timestamp(out, 1795305061000007);
  EXPECT_EQ(out, "time=2026-11-21T23:51:01.000007Z");
}

TEST(Timestamp, DayAndYearBoundaries) {
  const std::int64_t new_year = *proto::parse_utc_timestamp("2025-01-01T00:00:00.000000Z");
  EXPECT_EQ(proto::format_utc_timestamp(new_year - 1), "2024-12-31T23:59:59.999999Z");
  const std::int64_t leap_day = *proto::parse_utc_timestamp("2024-02-29T00:00:00.000000Z");
  EXPECT_EQ(proto::format_utc_timestamp(leap_day + k_us_per_day), "2024-03-01T00:00:00.000000Z");
  EXPECT_EQ(proto::format_utc_timestamp(leap_day - 1), "2024-02-28T23:59:59.999999Z");
  EXPECT_EQ(*proto::parse_utc_timestamp("2024-03-01T00:00:00.000000Z") - leap_day, k_us_per_day);
  EXPECT_EQ(*proto::parse_utc_timestamp("2023-03-01T00:00:00.000000Z") -
                *proto::parse_utc_timestamp("2023-02-28T00:00:00.000000Z"),
            k_us_per_day);
}

TEST(Timestamp, RoundTripsAcrossTheWholeRange) {
  std::mt19937_64 random(20261121);
  std::uniform_int_distribution<std::int64_t> any(0, proto::k_max_timestamp_us);
  for (int i = 0; i < 100000; ++i) {
    const std::int64_t us = any(random);
    const std::string text = proto::format_utc_timestamp(us);
    ASSERT_EQ(text.size(), 27u) << text;
    ASSERT_EQ(proto::parse_utc_timestamp(text), us) << text;
  }
  // Every day of a leap-year cycle and a century boundary.
  const std::int64_t start = *proto::parse_utc_timestamp("1999-12-25T13:14:15.161718Z");
  for (std::int64_t day = 0; day < 3 * 366 + 365; ++day) {
    const std::int64_t us = start + day * k_us_per_day;
    ASSERT_EQ(proto::parse_utc_timestamp(proto::format_utc_timestamp(us)), us);
  }
}

TEST(Timestamp, NowIsPlausible) {
  const std::int64_t now = proto::unix_now_us();
  EXPECT_GT(now, *proto::parse_utc_timestamp("2024-01-01T00:00:00Z"));
  EXPECT_LT(now, *proto::parse_utc_timestamp("2200-01-01T00:00:00Z"));
  const std::int64_t later = proto::unix_now_us();
  EXPECT_GE(later, now);
}
