#pragma once
// What config_file*.cpp's visitors share: the list of settings
// (DaemonOptions::visit_settings, daemon/app/options.hpp: the daemon's own
// declared beside their members, each component's beside its options) and
// the conversions of values to and from TOML. Loading, flag handling,
// validation and rendering are visitors over that list, so a setting
// declared once is known to all of them. (Internal to config_file*.cpp.)

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "daemon/app/options.hpp"
#include "daemon/export/http_client.hpp"
#include "daemon/export/rule_settings.hpp"
#include "daemon/metrics/metrics_settings.hpp"
#include "daemon/query/query_service.hpp"
#include "daemon/settings/setting.hpp"
#include "daemon/source/socket_file.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "otlp/export_rules.hpp"

namespace trace2d::app::config {

// The vocabulary of a declaration (daemon/settings/setting.hpp).
using settings::any_text;
using settings::Check;
using settings::k_day_ms;
using settings::k_hour_ms;
using settings::k_mib;
using settings::Key;
using settings::Range;
using settings::Reload;

template <typename T>
struct IsDuration : std::false_type {};
template <typename Rep, typename Period>
struct IsDuration<std::chrono::duration<Rep, Period>> : std::true_type {};

template <typename T>
std::int64_t to_int(const T& field) {
  if constexpr (IsDuration<std::remove_cv_t<T>>::value) {
    return static_cast<std::int64_t>(field.count());
  } else {
    return static_cast<std::int64_t>(field);
  }
}

template <typename T>
void assign_int(T& field, std::int64_t value) {
  if constexpr (IsDuration<T>::value) {
    field = T(static_cast<typename T::rep>(value));
  } else {
    field = static_cast<T>(value);
  }
}

// TOML's basic string, so that any path renders as valid TOML.
inline std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\u{:04X}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

inline std::string range_problem(std::int64_t value, const Range& range) {
  if (value < range.min || value > range.max) {
    return fmt::format("must be between {} and {}, not {}", range.min, range.max, value);
  }
  return {};
}

// "0660", "660": octal digits only, as chmod takes them.
inline std::optional<unsigned> parse_mode(std::string_view text) {
  if (text.empty() || text.size() > 4) {
    return std::nullopt;
  }
  unsigned mode = 0;
  for (const char c : text) {
    if (c < '0' || c > '7') {
      return std::nullopt;
    }
    mode = mode * 8 + static_cast<unsigned>(c - '0');
  }
  return mode;
}

inline std::string mode_problem(unsigned mode) {
  // Set-id and sticky bits mean nothing on a socket.
  return mode > 0777 ? fmt::format("must be a mode of at most \"0777\", not \"{:04o}\"", mode) : std::string();
}

// Every setting, in the order of the file (DaemonOptions::visit_settings).
template <typename Options, typename Visitor>
void visit_settings(Options& o, Visitor& v) {
  DaemonOptions::visit_settings(o, v);
}

}  // namespace trace2d::app::config
