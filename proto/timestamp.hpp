#pragma once
// Trace2 "time" values. git writes UTC, "YYYY-MM-DDTHH:MM:SS.ffffffZ"; other
// producers write other RFC 3339 / ISO 8601 shapes (docs/trace2-format.md,
// "Other producers").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trace2d::proto {

// Microseconds since 1970-01-01T00:00:00Z. Accepts git's format and, for other
// producers, any RFC 3339 / ISO 8601 extended date-time: "T" or "t", 0 to 9
// fraction digits after "." or "," (truncated to microseconds), a leap second
// ":60" (folded into the last microsecond of its minute), and a zone that is
// "Z"/"z", a numeric offset ("+01:00", "-0430", "+01"), or repo's "+00:00Z".
// The result, in UTC, must lie in 1970..9999. Anything else is nullopt.
[[nodiscard]] std::optional<std::int64_t> parse_utc_timestamp(std::string_view text);

// git's format, always with 6 fraction digits. `unix_us` must be >= 0.
void append_utc_timestamp(std::string& out, std::int64_t unix_us);
[[nodiscard]] std::string format_utc_timestamp(std::int64_t unix_us);

// Microseconds since the epoch, now.
[[nodiscard]] std::int64_t unix_now_us();

inline constexpr std::int64_t k_max_timestamp_us = 253402300799999999;  // 9999-12-31T23:59:59.999999Z

}  // namespace trace2d::proto
