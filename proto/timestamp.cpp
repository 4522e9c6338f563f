#include "proto/timestamp.hpp"

#include <chrono>

namespace trace2d::proto {
namespace {

// Howard Hinnant's days_from_civil / civil_from_days (public domain).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil {
  std::int64_t year;
  unsigned month;
  unsigned day;
};

Civil civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2 ? 1 : 0), m, d};
}

bool is_leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(std::int64_t y, unsigned m) {
  static constexpr unsigned k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : k_days[m - 1];
}

// Reads exactly `n` digits at `pos`.
bool read_digits(std::string_view s, std::size_t pos, std::size_t n, unsigned& out) {
  if (pos + n > s.size()) {
    return false;
  }
  unsigned v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') {
      return false;
    }
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  out = v;
  return true;
}

void append_digits(std::string& out, std::int64_t value, int width) {
  char buf[20];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 || n < width);
  while (n > 0) {
    out.push_back(buf[--n]);
  }
}

// Reads a zone designator at `pos`: "Z", a numeric offset ("+HH:MM",
// "+HHMM", "+HH"; "-00:00" is UTC too), or repo's "+00:00Z" (Python's
// isoformat() of a UTC time with a "Z" appended). Sets the offset east of UTC
// in seconds; false unless the designator ends the text.
bool read_zone(std::string_view s, std::size_t pos, std::int64_t& offset_seconds) {
  if (pos >= s.size()) {
    return false;
  }
  if (s[pos] == 'Z' || s[pos] == 'z') {
    offset_seconds = 0;
    return pos + 1 == s.size();
  }
  if (s[pos] != '+' && s[pos] != '-') {
    return false;
  }
  const bool west = s[pos] == '-';
  unsigned hours = 0, minutes = 0;
  if (!read_digits(s, pos + 1, 2, hours)) {
    return false;
  }
  pos += 3;
  if (pos < s.size() && s[pos] == ':') {
    if (!read_digits(s, pos + 1, 2, minutes)) {
      return false;
    }
    pos += 3;
  } else if (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
    if (!read_digits(s, pos, 2, minutes)) {
      return false;
    }
    pos += 2;
  }
  if (hours > 23 || minutes > 59) {
    return false;
  }
  offset_seconds = (west ? -1 : 1) * static_cast<std::int64_t>(hours * 3600 + minutes * 60);
  if (pos + 1 == s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    return offset_seconds == 0;  // "+05:00Z" says two different things
  }
  return pos == s.size();
}

}  // namespace

std::optional<std::int64_t> parse_utc_timestamp(std::string_view s) {
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(s, 0, 4, year) || s.size() < 20 || s[4] != '-' || !read_digits(s, 5, 2, month) ||
      s[7] != '-' || !read_digits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't') ||
      !read_digits(s, 11, 2, hour) || s[13] != ':' || !read_digits(s, 14, 2, minute) ||
      s[16] != ':' || !read_digits(s, 17, 2, second)) {
    return std::nullopt;
  }
  std::size_t pos = 19;
  std::int64_t micros = 0;
  if (s[pos] == '.' || s[pos] == ',') {  // ISO 8601 allows either decimal sign
    ++pos;
    std::size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6) {
        micros = micros * 10 + (s[pos] - '0');
      }
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) {
      return std::nullopt;
    }
    for (std::size_t d = digits; d < 6; ++d) {
      micros *= 10;
    }
  }
  std::int64_t offset_seconds = 0;
  if (!read_zone(s, pos, offset_seconds)) {
    return std::nullopt;
  }
  // RFC 3339 allows a leap second (":60", at the end of a minute). The epoch
  // count has no room for it: it folds into the last microsecond before the
  // next minute, so that times stay in order.
  const bool leap_second = second == 60;
  if (leap_second) {
    second = 59;
    micros = 999999;
  }
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) ||
      hour > 23 || minute > 59 || second > 59) {
    return std::nullopt;
  }
  const std::int64_t days = days_from_civil(year, month, day);
  const std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  const std::int64_t unix_us = seconds * 1000000 + micros;
  if (unix_us < 0 || unix_us > k_max_timestamp_us) {
    return std::nullopt;  // before 1970 or after 9999 once in UTC
  }
  return unix_us;
}

void append_utc_timestamp(std::string& out, std::int64_t unix_us) {
  const std::int64_t seconds = unix_us / 1000000;
  const std::int64_t micros = unix_us % 1000000;
  const std::int64_t days = seconds / 86400;
  const std::int64_t sod = seconds % 86400;
  const Civil c = civil_from_days(days);
  append_digits(out, c.year, 4);
  out.push_back('-');
  append_digits(out, c.month, 2);
  out.push_back('-');
  append_digits(out, c.day, 2);
  out.push_back('T');
  append_digits(out, sod / 3600, 2);
  out.push_back(':');
  append_digits(out, sod % 3600 / 60, 2);
  out.push_back(':');
  append_digits(out, sod % 60, 2);
  out.push_back('.');
  append_digits(out, micros, 6);
  out.push_back('Z');
}

std::string format_utc_timestamp(std::int64_t unix_us) {
  std::string out;
  append_utc_timestamp(out, unix_us);
  return out;
}

std::int64_t unix_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace trace2d::proto
