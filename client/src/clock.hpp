#pragma once
// Clocks and the fixed-width text git writes for them. Everything here is
// async-signal-safe (no allocation, no locale, no locks): the fatal-signal
// handler formats its event with it.

#include <cstddef>
#include <cstdint>

namespace trace2d::client::detail {

// CLOCK_MONOTONIC, for t_abs and t_rel (git uses a monotonic clock too).
[[nodiscard]] std::int64_t mono_us() noexcept;
[[nodiscard]] std::int64_t mono_ns() noexcept;
// CLOCK_REALTIME, for "time" and the SID.
[[nodiscard]] std::int64_t real_us() noexcept;

// "YYYY-MM-DDTHH:MM:SS.ffffffZ", UTC (the "time" field).
inline constexpr std::size_t k_time_extended_len = 27;
void format_time_extended(char* out, std::int64_t unix_us) noexcept;
// "YYYYMMDDTHHMMSS.ffffffZ", UTC (the start of a SID component).
inline constexpr std::size_t k_time_compact_len = 23;
void format_time_compact(char* out, std::int64_t unix_us) noexcept;

// Decimal text of `value`; `out` holds at least 20 bytes. Returns the length.
std::size_t format_int(char* out, std::int64_t value) noexcept;
// git's "%.6f" of us / 1e6 for us >= 0: exactly the integer microseconds
// with six decimals, so no floating point is needed. At least 28 bytes.
std::size_t format_seconds(char* out, std::int64_t us) noexcept;

}  // namespace trace2d::client::detail
