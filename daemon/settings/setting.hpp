#pragma once
// A setting's declaration: where it is in the configuration file, its flag,
// what `trace2d --help` says of it, its bounds and whether SIGHUP applies
// it. A component declares the settings of its own options beside them, as
// a `visit_settings(options, visitor)` over its members (the list is in
// docs/architecture.md, "Where to change what"); the daemon's own settings
// are declared beside DaemonOptions' members (daemon/app/options.hpp),
// whose visit_settings visits the components' too.
// Loading, flags, checks, rendering, --help and the docs test are visitors
// over that one list, so a setting declared once is known to all of them.
//
// A visitor has, for a member of each kind:
//   text(Key, std::string&, Check)
//   list(Key, std::vector<std::string>&, Check)   each entry checked
//   boolean(Key, bool&)
//   mode(Key, unsigned&)                           octal, as chmod takes it
//   integer(Key, N&, Range)                        N an integer or a duration

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace trace2d::settings {

// Whether a running daemon applies a changed value on SIGHUP (live), or
// needs a restart (the sockets, the database, the threads and the queue are
// made once, at start-up).
enum class Reload : bool { restart, live };

// docs/configuration.md names the same flag and placeholder, and the same
// default (tests/daemon/test_config_file.cpp).
struct Key {
  std::string_view section;
  std::string_view name;
  std::string_view flag;        // the command-line flag that overrides it
  std::string_view value_name;  // its value's placeholder in --help, "MS", "PATH"; "" for a boolean
  std::string_view help;        // one line of --help
  Reload reload = Reload::restart;

  [[nodiscard]] std::string full() const { return fmt::format("{}.{}", section, name); }
};

// Checks a string value: the problem ("is not absolute: ..."), or "" when fine.
using Check = std::string (*)(const std::string&);

struct Range {
  std::int64_t min;
  std::int64_t max;
  std::int64_t unit = 1;  // the field holds value * unit (MiB kept as bytes)
};

inline constexpr std::int64_t k_hour_ms = 3600LL * 1000;
inline constexpr std::int64_t k_day_ms = 24 * k_hour_ms;
inline constexpr std::int64_t k_mib = 1024 * 1024;

inline std::string any_text(const std::string&) {
  return {};
}

inline std::string not_empty(const std::string& value) {
  return value.empty() ? "must not be empty" : std::string();
}

// A path that is absolute, or "" (the setting's default is used then).
inline std::string absolute_path_or_empty(const std::string& path) {
  return path.empty() || path.front() == '/' ? std::string() : fmt::format("is not absolute: '{}'", path);
}

}  // namespace trace2d::settings
