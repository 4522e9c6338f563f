#include "ctl/query/time_filter.hpp"

#include <charconv>
#include <cmath>
#include <ctime>
#include <limits>

#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

constexpr std::int64_t k_second = 1'000'000;

std::optional<double> unit_seconds(char unit) {
  switch (unit) {
    case 's': return 1.0;
    case 'm': return 60.0;
    case 'h': return 3600.0;
    case 'd': return 86400.0;
    case 'w': return 7 * 86400.0;
    default: return std::nullopt;
  }
}

std::optional<std::int64_t> parse_duration_us(std::string_view text) {
  if (text.size() < 2) {
    return std::nullopt;
  }
  const auto unit = unit_seconds(text.back());
  const std::string_view digits = text.substr(0, text.size() - 1);
  // Digits and at most one '.', nothing else: from_chars alone would take
  // "1e3" and "inf".
  if (digits.find_first_not_of("0123456789.") != std::string_view::npos || digits.front() == '.' ||
      digits.back() == '.') {
    return std::nullopt;
  }
  double count = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
  if (!unit || ec != std::errc() || end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  const double us = std::round(count * *unit * static_cast<double>(k_second));
  // A duration reaching before the epoch means "everything"; saturate.
  if (us >= static_cast<double>(std::numeric_limits<std::int64_t>::max() / 2)) {
    return std::numeric_limits<std::int64_t>::max() / 2;
  }
  return static_cast<std::int64_t>(us);
}

// A cursor over the text: each take_* consumes what it read or nothing.
class Reader {
 public:
  explicit Reader(std::string_view text) : m_text(text) {}
  [[nodiscard]] bool done() const { return m_pos == m_text.size(); }
  [[nodiscard]] char peek() const { return done() ? '\0' : m_text[m_pos]; }
  bool take(char c) {
    if (peek() != c) {
      return false;
    }
    ++m_pos;
    return true;
  }
  // Exactly `count` digits.
  std::optional<int> take_digits(std::size_t count) {
    if (m_text.size() - m_pos < count) {
      return std::nullopt;
    }
    int value = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const char c = m_text[m_pos + i];
      if (c < '0' || c > '9') {
        return std::nullopt;
      }
      value = value * 10 + (c - '0');
    }
    m_pos += count;
    return value;
  }
  // After a '.': one to six digits (more are cut), as microseconds.
  std::optional<std::int64_t> take_fraction_us() {
    std::int64_t us = 0;
    std::size_t digits = 0;
    while (!done() && peek() >= '0' && peek() <= '9') {
      if (digits < 6) {
        us = us * 10 + (peek() - '0');
      }
      ++digits;
      ++m_pos;
    }
    if (digits == 0) {
      return std::nullopt;
    }
    for (std::size_t i = digits; i < 6; ++i) {
      us *= 10;
    }
    return us;
  }

 private:
  std::string_view m_text;
  std::size_t m_pos = 0;
};

struct Clock {
  int hour = 0;
  int minute = 0;
  int second = 0;
  std::int64_t fraction_us = 0;
};

// "HH:MM[:SS[.frac]]"
std::optional<Clock> take_clock(Reader& in) {
  Clock clock;
  const auto hour = in.take_digits(2);
  if (!hour || !in.take(':')) {
    return std::nullopt;
  }
  const auto minute = in.take_digits(2);
  if (!minute || *hour > 23 || *minute > 59) {
    return std::nullopt;
  }
  clock.hour = *hour;
  clock.minute = *minute;
  if (in.take(':')) {
    const auto second = in.take_digits(2);
    if (!second || *second > 60) {
      return std::nullopt;
    }
    clock.second = *second;
    if (in.take('.')) {
      const auto fraction = in.take_fraction_us();
      if (!fraction) {
        return std::nullopt;
      }
      clock.fraction_us = *fraction;
    }
  }
  return clock;
}

// "Z", "+HH:MM", "+HHMM", "+HH" (or '-'): seconds east of UTC.
std::optional<int> take_zone(Reader& in) {
  if (in.take('Z') || in.take('z')) {
    return 0;
  }
  int sign = 0;
  if (in.take('+')) {
    sign = 1;
  } else if (in.take('-')) {
    sign = -1;
  } else {
    return std::nullopt;
  }
  const auto hours = in.take_digits(2);
  if (!hours || *hours > 23) {
    return std::nullopt;
  }
  int minutes = 0;
  if (!in.done()) {
    in.take(':');
    const auto mm = in.take_digits(2);
    if (!mm || *mm > 59) {
      return std::nullopt;
    }
    minutes = *mm;
  }
  return sign * (*hours * 3600 + minutes * 60);
}

// Local midnight (or clock time) of a calendar day; nullopt for a day that
// does not exist (mktime would quietly roll 2026-02-30 into March).
std::optional<std::int64_t> local_us(int year, int month, int day, const Clock& clock) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = clock.hour;
  tm.tm_min = clock.minute;
  tm.tm_sec = clock.second;
  tm.tm_isdst = -1;  // whatever the zone's rules say for that day
  const std::tm asked = tm;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1) && !(asked.tm_year == 69 && asked.tm_mday == 31)) {
    return std::nullopt;
  }
  if (tm.tm_mday != asked.tm_mday || tm.tm_mon != asked.tm_mon) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(t) * k_second + clock.fraction_us;
}

std::optional<std::int64_t> utc_us(int year, int month, int day, const Clock& clock, int offset_seconds) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = clock.hour;
  tm.tm_min = clock.minute;
  tm.tm_sec = clock.second;
  const std::tm asked = tm;
  const std::time_t t = ::timegm(&tm);
  if (tm.tm_mday != asked.tm_mday || tm.tm_mon != asked.tm_mon) {
    return std::nullopt;
  }
  return (static_cast<std::int64_t>(t) - offset_seconds) * k_second + clock.fraction_us;
}

// Today's date in local time, as of `now_us`.
std::tm local_date(std::int64_t now_us) {
  const std::time_t now = static_cast<std::time_t>(now_us / k_second);
  std::tm tm{};
  ::localtime_r(&now, &tm);
  return tm;
}

std::optional<std::int64_t> parse_named_day(std::string_view text, std::int64_t now_us) {
  int shift = 0;
  if (text == "now") {
    return now_us;
  }
  if (text == "today") {
    shift = 0;
  } else if (text == "yesterday") {
    shift = -1;
  } else if (text == "tomorrow") {
    shift = 1;
  } else {
    return std::nullopt;
  }
  const std::tm today = local_date(now_us);
  // mktime normalises day 0 and day 32 into the neighbouring months.
  std::tm tm{};
  tm.tm_year = today.tm_year;
  tm.tm_mon = today.tm_mon;
  tm.tm_mday = today.tm_mday + shift;
  tm.tm_isdst = -1;
  return static_cast<std::int64_t>(std::mktime(&tm)) * k_second;
}

std::optional<std::int64_t> parse_date_time(std::string_view text, std::int64_t now_us) {
  Reader in(text);
  int year = 0;
  int month = 0;
  int day = 0;
  Clock clock;
  if (text.size() >= 3 && text[2] == ':') {
    // A time of day alone: today.
    const auto c = take_clock(in);
    if (!c) {
      return std::nullopt;
    }
    clock = *c;
    const std::tm today = local_date(now_us);
    year = today.tm_year + 1900;
    month = today.tm_mon + 1;
    day = today.tm_mday;
  } else {
    const auto y = in.take_digits(4);
    if (!y || !in.take('-')) {
      return std::nullopt;
    }
    const auto m = in.take_digits(2);
    if (!m || !in.take('-')) {
      return std::nullopt;
    }
    const auto d = in.take_digits(2);
    if (!d || *m < 1 || *m > 12 || *d < 1 || *d > 31) {
      return std::nullopt;
    }
    year = *y;
    month = *m;
    day = *d;
    if (in.take('T') || in.take(' ')) {
      const auto c = take_clock(in);
      if (!c) {
        return std::nullopt;
      }
      clock = *c;
    }
  }
  if (in.done()) {
    return local_us(year, month, day, clock);
  }
  const auto offset = take_zone(in);
  if (!offset || !in.done()) {
    return std::nullopt;
  }
  return utc_us(year, month, day, clock, *offset);
}

}  // namespace

std::optional<std::int64_t> parse_time(std::string_view text, std::int64_t now_us) {
  std::optional<std::int64_t> us;
  if (const auto duration = parse_duration_us(text)) {
    us = *duration >= now_us ? 0 : now_us - *duration;
  } else if (const auto named = parse_named_day(text, now_us)) {
    us = named;
  } else {
    us = parse_date_time(text, now_us);
  }
  if (us && *us < 0) {
    us = 0;
  }
  return us;
}

std::string time_as_text(std::int64_t unix_us) { return proto::format_utc_timestamp(unix_us); }

std::string describe_time_error(const std::string& text) {
  if (parse_time(text, proto::unix_now_us())) {
    return {};
  }
  return "'" + text + "' is not a time: give " + k_time_help;
}

}  // namespace trace2d::ctl
