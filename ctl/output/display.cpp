#include "ctl/output/display.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

Display& current() {
  static Display display;
  return display;
}

// A stored time in the display's zone, to the millisecond or the minute.
std::string shown_time(std::string_view stored, bool to_the_minute) {
  // Only git's own shape, as trace2d stores times: anything else is shown
  // as it is, so nothing is made up.
  constexpr std::size_t k_stored_size = 27;  // YYYY-MM-DDTHH:MM:SS.ffffffZ
  if (stored.size() != k_stored_size || stored[10] != 'T' || stored.back() != 'Z') {
    return std::string(stored);
  }
  const std::optional<std::int64_t> us = proto::parse_utc_timestamp(stored);
  if (!us) {
    return std::string(stored);
  }
  const std::time_t seconds = static_cast<std::time_t>(*us / 1'000'000);
  const int millis = static_cast<int>((*us % 1'000'000) / 1000);
  std::tm tm{};
  const bool utc = current().utc;
  if (utc ? ::gmtime_r(&seconds, &tm) == nullptr : ::localtime_r(&seconds, &tm) == nullptr) {
    return std::string(stored);
  }
  char date[32];
  if (std::strftime(date, sizeof date, to_the_minute ? "%Y-%m-%d %H:%M" : "%Y-%m-%d %H:%M:%S", &tm) == 0) {
    return std::string(stored);
  }
  const char* zone = utc ? "UTC" : (tm.tm_zone != nullptr ? tm.tm_zone : "");
  char text[96];
  if (to_the_minute) {
    std::snprintf(text, sizeof text, "%s %s", date, zone);
  } else {
    std::snprintf(text, sizeof text, "%s.%03d %s", date, millis, zone);
  }
  std::string out(text);
  while (out.ends_with(' ')) {
    out.pop_back();
  }
  return out;
}

}  // namespace

void set_display(const Display& display) { current() = display; }

const Display& display() { return current(); }

bool cuts_cells() { return current().terminal_columns.has_value() && !current().whole; }

std::optional<std::size_t> terminal_columns(int fd) {
  if (::isatty(fd) != 1) {
    return std::nullopt;
  }
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
    std::size_t value = 0;
    const std::string_view text(columns);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size() && value > 0) {
      return value;
    }
  }
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  return std::size_t{80};  // a terminal that does not say: the classic width
}

std::string display_time(std::string_view stored) {
  return shown_time(stored, false);
}

std::string display_minute(std::string_view stored) {
  return shown_time(stored, true);
}

bool is_time_column(std::string_view name) {
  return name == "start_time" || name == "end_time" || name == "first_received" || name == "last_received" ||
         name == "time" || name == "received_at" || name == "updated_at" || name == "started_at";
}

}  // namespace trace2d::ctl
