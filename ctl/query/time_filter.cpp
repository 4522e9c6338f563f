#include "ctl/query/time_filter.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <cmath>
#include <ctime>
#include <limits>

#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

constexpr std::int64_t k_second = 1'000'000;

// systemd's time-span units (systemd.time(7)), a month and a year as
// systemd counts them (30.44 and 365.25 days).
std::optional<double> unit_seconds(std::string_view unit) {
  struct Unit {
    std::string_view name;
    double seconds;
  };
  static constexpr Unit k_units[] = {
      {"usec", 1e-6},      {"us", 1e-6},       {"\xce\xbcs", 1e-6},  {"msec", 1e-3},    {"ms", 1e-3},
      {"seconds", 1},      {"second", 1},      {"sec", 1},         {"s", 1},          {"minutes", 60},
      {"minute", 60},      {"min", 60},        {"m", 60},          {"hours", 3600},   {"hour", 3600},
      {"hr", 3600},        {"h", 3600},        {"days", 86400},    {"day", 86400},    {"d", 86400},
      {"weeks", 604800},   {"week", 604800},   {"w", 604800},      {"months", 2629800}, {"month", 2629800},
      {"M", 2629800},      {"years", 31557600}, {"year", 31557600}, {"y", 31557600},
  };
  for (const Unit& u : k_units) {
    if (u.name == unit) {
      return u.seconds;
    }
  }
  return std::nullopt;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

// A time span as systemd reads one: numbers, each with a unit or none
// (seconds), fractions allowed, spaces between them or not: "1h", "1.5h",
// "1h 30min", "1h30min", "90", "5 min". Microseconds, saturated far past
// any real time.
std::optional<std::int64_t> parse_span_us(std::string_view text) {
  std::size_t pos = 0;
  double total_us = 0;
  bool any = false;
  while (true) {
    while (pos < text.size() && is_space(text[pos])) {
      ++pos;
    }
    if (pos == text.size()) {
      break;
    }
    // Digits, a fraction or both ("1", "1.5", ".5"); never a sign or an
    // exponent, which from_chars alone would take.
    const std::size_t number_start = pos;
    while (pos < text.size() && is_digit(text[pos])) {
      ++pos;
    }
    const bool whole = pos > number_start;
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      const std::size_t fraction_start = pos;
      while (pos < text.size() && is_digit(text[pos])) {
        ++pos;
      }
      if (pos == fraction_start) {
        return std::nullopt;
      }
    } else if (!whole) {
      return std::nullopt;
    }
    double count = 0;
    const std::string number = (whole ? "" : "0") + std::string(text.substr(number_start, pos - number_start));
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), count);
    if (ec != std::errc() || end != number.data() + number.size()) {
      return std::nullopt;
    }
    while (pos < text.size() && is_space(text[pos])) {
      ++pos;
    }
    const std::size_t unit_start = pos;
    while (pos < text.size() && !is_space(text[pos]) && !is_digit(text[pos]) && text[pos] != '.') {
      ++pos;
    }
    double seconds = 1;
    if (pos > unit_start) {
      const auto unit = unit_seconds(text.substr(unit_start, pos - unit_start));
      if (!unit) {
        return std::nullopt;
      }
      seconds = *unit;
    }
    total_us += count * seconds * static_cast<double>(k_second);
    any = true;
  }
  if (!any) {
    return std::nullopt;
  }
  // A span reaching before the epoch means "everything"; saturate.
  constexpr std::int64_t k_everything_us = std::numeric_limits<std::int64_t>::max() / 4;
  if (total_us >= static_cast<double>(k_everything_us)) {
    return k_everything_us;
  }
  return static_cast<std::int64_t>(std::llround(total_us));
}

// "-SPAN", "+SPAN", "SPAN ago", "SPAN left": relative to now, as journalctl
// reads them.
std::optional<std::int64_t> parse_relative(std::string_view text, std::int64_t now_us) {
  constexpr std::string_view k_ago = " ago";
  constexpr std::string_view k_left = " left";
  std::optional<std::int64_t> span;
  int sign = 0;
  if (text.starts_with('-') || text.starts_with('+')) {
    sign = text.front() == '-' ? -1 : 1;
    span = parse_span_us(text.substr(1));
  } else if (text.ends_with(k_ago)) {
    sign = -1;
    span = parse_span_us(text.substr(0, text.size() - k_ago.size()));
  } else if (text.ends_with(k_left)) {
    sign = 1;
    span = parse_span_us(text.substr(0, text.size() - k_left.size()));
  }
  if (!span) {
    return std::nullopt;
  }
  if (sign < 0) {
    return *span >= now_us ? 0 : now_us - *span;
  }
  return now_us + std::min(*span, std::numeric_limits<std::int64_t>::max() / 4);
}

// "@SECONDS[.fraction]": seconds since the epoch, UTC.
std::optional<std::int64_t> parse_epoch(std::string_view text) {
  if (!text.starts_with('@') || text.size() < 2) {
    return std::nullopt;
  }
  std::string_view digits = text.substr(1);
  std::string_view fraction;
  if (const auto dot = digits.find('.'); dot != std::string_view::npos) {
    fraction = digits.substr(dot + 1);
    digits = digits.substr(0, dot);
    if (fraction.empty()) {
      return std::nullopt;
    }
  }
  if (digits.empty() || digits.size() > 12 || !std::all_of(digits.begin(), digits.end(), is_digit) ||
      !std::all_of(fraction.begin(), fraction.end(), is_digit)) {
    return std::nullopt;
  }
  std::int64_t seconds = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), seconds);
  std::int64_t us = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    us = us * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  }
  return seconds * k_second + us;
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
  // One to `most` digits, as strptime reads %m, %d, %H, %M, %S.
  std::optional<int> take_up_to_digits(std::size_t most) {
    std::size_t count = 0;
    while (count < most && m_pos + count < m_text.size() && m_text[m_pos + count] >= '0' &&
           m_text[m_pos + count] <= '9') {
      ++count;
    }
    return count == 0 ? std::nullopt : take_digits(count);
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
  const auto hour = in.take_up_to_digits(2);
  if (!hour || !in.take(':')) {
    return std::nullopt;
  }
  const auto minute = in.take_up_to_digits(2);
  if (!minute || *hour > 23 || *minute > 59) {
    return std::nullopt;
  }
  clock.hour = *hour;
  clock.minute = *minute;
  if (in.take(':')) {
    const auto second = in.take_up_to_digits(2);
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

// Today's date in UTC, as of `now_us`.
std::tm utc_date(std::int64_t now_us) {
  const std::time_t now = static_cast<std::time_t>(now_us / k_second);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  return tm;
}

// `text` without a trailing " EST" when that is the local zone's name (or
// its summer name), as journalctl reads it and as tables print local times.
std::string_view without_local_zone_name(std::string_view text) {
  ::tzset();
  for (const char* name : {::tzname[0], ::tzname[1]}) {
    if (name == nullptr || *name == '\0') {
      continue;
    }
    const std::string suffix = std::string(" ") + name;
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      return text.substr(0, text.size() - suffix.size());
    }
  }
  return text;
}

std::optional<std::int64_t> parse_named_day(std::string_view text, std::int64_t now_us, bool utc) {
  int shift = 0;
  if (text == "now") {
    return utc ? std::nullopt : std::optional<std::int64_t>(now_us);  // journalctl refuses "now UTC"
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
  const std::tm today = utc ? utc_date(now_us) : local_date(now_us);
  // mktime and timegm normalise day 0 and day 32 into the neighbouring months.
  std::tm tm{};
  tm.tm_year = today.tm_year;
  tm.tm_mon = today.tm_mon;
  tm.tm_mday = today.tm_mday + shift;
  tm.tm_isdst = -1;
  return static_cast<std::int64_t>(utc ? ::timegm(&tm) : std::mktime(&tm)) * k_second;
}

// `utc`: the text ended in " UTC" (removed), as journalctl reads it.
std::optional<std::int64_t> parse_date_time(std::string_view text, std::int64_t now_us, bool utc) {
  Reader in(text);
  int year = 0;
  int month = 0;
  int day = 0;
  Clock clock;
  if (const auto colon = text.find(':'); colon != std::string_view::npos && colon <= 2) {
    // A time of day alone: today.
    const auto c = take_clock(in);
    if (!c) {
      return std::nullopt;
    }
    clock = *c;
    const std::tm today = utc ? utc_date(now_us) : local_date(now_us);
    year = today.tm_year + 1900;
    month = today.tm_mon + 1;
    day = today.tm_mday;
  } else {
    // "YYYY-", or "YY-" as strptime's %y reads it (69..99: 1900s).
    std::optional<int> y = in.take_digits(4);
    if (!y) {
      y = in.take_digits(2);
      if (y) {
        *y += *y < 69 ? 2000 : 1900;
      }
    }
    if (!y || !in.take('-')) {
      return std::nullopt;
    }
    const auto m = in.take_up_to_digits(2);
    if (!m || !in.take('-')) {
      return std::nullopt;
    }
    const auto d = in.take_up_to_digits(2);
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
    return utc ? utc_us(year, month, day, clock, 0) : local_us(year, month, day, clock);
  }
  const auto offset = take_zone(in);
  if (utc || !offset || !in.done()) {
    return std::nullopt;
  }
  return utc_us(year, month, day, clock, *offset);
}

}  // namespace

std::optional<std::int64_t> parse_time(std::string_view text, std::int64_t now_us) {
  std::optional<std::int64_t> us;
  if (const auto relative = parse_relative(text, now_us)) {
    us = relative;
  } else if (const auto epoch = parse_epoch(text)) {
    us = epoch;
  } else {
    constexpr std::string_view k_utc = " UTC";
    const bool utc = text.ends_with(k_utc);
    std::string_view rest = utc ? text.substr(0, text.size() - k_utc.size()) : text;
    if (!utc) {
      rest = without_local_zone_name(rest);
    }
    if (const auto named = parse_named_day(rest, now_us, utc)) {
      us = named;
    } else {
      us = parse_date_time(rest, now_us, utc);
    }
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
  if (parse_span_us(text)) {
    // What trace2ctl took before it read times as journalctl does.
    return "'" + text + "' is a duration, not a time: for that long ago write '-" + text + "' or '" + text +
           " ago' (as journalctl)";
  }
  return "'" + text + "' is not a time: give " + k_time_help;
}

}  // namespace trace2d::ctl
