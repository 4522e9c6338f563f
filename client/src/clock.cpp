#include "client/src/clock.hpp"

#include <time.h>

namespace trace2d::client::detail {
namespace {

std::int64_t read_clock(clockid_t clock, std::int64_t unit_ns) noexcept {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return (static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec) / unit_ns;
}

struct Civil {
  std::int64_t year;
  unsigned month;
  unsigned day;
  unsigned hour;
  unsigned minute;
  unsigned second;
  unsigned micros;
};

// Howard Hinnant's civil_from_days (public domain), as proto/timestamp.cpp.
Civil civil_from_unix_us(std::int64_t unix_us) noexcept {
  const std::int64_t seconds = unix_us / 1000000;
  const auto micros = static_cast<unsigned>(unix_us % 1000000);
  std::int64_t z = seconds / 86400 + 719468;
  const auto sod = static_cast<unsigned>(seconds % 86400);
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0);
  return {y, m, d, sod / 3600, sod % 3600 / 60, sod % 60, micros};
}

char* put_digits(char* out, std::int64_t value, int width) noexcept {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  return out + width;
}

}  // namespace

std::int64_t mono_us() noexcept { return read_clock(CLOCK_MONOTONIC, 1000); }
std::int64_t mono_ns() noexcept { return read_clock(CLOCK_MONOTONIC, 1); }
std::int64_t real_us() noexcept { return read_clock(CLOCK_REALTIME, 1000); }

void format_time_extended(char* out, std::int64_t unix_us) noexcept {
  const Civil c = civil_from_unix_us(unix_us);
  out = put_digits(out, c.year, 4);
  *out++ = '-';
  out = put_digits(out, c.month, 2);
  *out++ = '-';
  out = put_digits(out, c.day, 2);
  *out++ = 'T';
  out = put_digits(out, c.hour, 2);
  *out++ = ':';
  out = put_digits(out, c.minute, 2);
  *out++ = ':';
  out = put_digits(out, c.second, 2);
  *out++ = '.';
  out = put_digits(out, c.micros, 6);
  *out = 'Z';
}

void format_time_compact(char* out, std::int64_t unix_us) noexcept {
  const Civil c = civil_from_unix_us(unix_us);
  out = put_digits(out, c.year, 4);
  out = put_digits(out, c.month, 2);
  out = put_digits(out, c.day, 2);
  *out++ = 'T';
  out = put_digits(out, c.hour, 2);
  out = put_digits(out, c.minute, 2);
  out = put_digits(out, c.second, 2);
  *out++ = '.';
  out = put_digits(out, c.micros, 6);
  *out = 'Z';
}

std::size_t format_int(char* out, std::int64_t value) noexcept {
  char digits[20];
  std::size_t n = 0;
  // Negate digit by digit so INT64_MIN needs no special case.
  const bool negative = value < 0;
  do {
    const std::int64_t digit = value % 10;
    digits[n++] = static_cast<char>('0' + (digit < 0 ? -digit : digit));
    value /= 10;
  } while (value != 0);
  std::size_t len = 0;
  if (negative) {
    out[len++] = '-';
  }
  while (n > 0) {
    out[len++] = digits[--n];
  }
  return len;
}

std::size_t format_seconds(char* out, std::int64_t us) noexcept {
  if (us < 0) {
    us = 0;  // a clock step backwards; git would print -0.000001 and worse
  }
  std::size_t len = format_int(out, us / 1000000);
  out[len++] = '.';
  put_digits(out + len, us % 1000000, 6);
  return len + 6;
}

}  // namespace trace2d::client::detail
