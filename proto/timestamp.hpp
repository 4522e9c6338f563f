#pragma once
// Trace2 "time" values: UTC, "YYYY-MM-DDTHH:MM:SS.ffffffZ".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trace2d::proto {

// Microseconds since 1970-01-01T00:00:00Z. Accepts git's format and, for other
// producers, 0 to 9 fraction digits (truncated to microseconds). Years must be
// 1970..9999. Anything else is nullopt.
[[nodiscard]] std::optional<std::int64_t> parse_utc_timestamp(std::string_view text);

// git's format, always with 6 fraction digits. `unix_us` must be >= 0.
void append_utc_timestamp(std::string& out, std::int64_t unix_us);
[[nodiscard]] std::string format_utc_timestamp(std::int64_t unix_us);

// Microseconds since the epoch, now.
[[nodiscard]] std::int64_t unix_now_us();

inline constexpr std::int64_t k_max_timestamp_us = 253402300799999999;  // 9999-12-31T23:59:59.999999Z

}  // namespace trace2d::proto
