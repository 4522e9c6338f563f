#include "daemon/app/options.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "daemon/source/runtime_dir.hpp"
#include "db/default_paths.hpp"
#include "trace2d/version.hpp"

namespace trace2d::app {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] == '/' ? std::string(value) : fallback;
}

std::string runtime_dir() {
  if (::geteuid() == 0) {
    return "/run/trace2d";
  }
  // The fallback is checked and made private when a socket is created there
  // (source::prepare_socket_directory).
  return env_or("XDG_RUNTIME_DIR", source::fallback_runtime_root()) + "/trace2d";
}

}  // namespace

std::string default_socket_path() { return runtime_dir() + "/trace2d.sock"; }

std::string default_dgram_socket_path() { return runtime_dir() + "/trace2d-dgram.sock"; }

std::string default_config_path() { return k_default_config_path; }

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
  if (text.empty()) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (value > (std::int64_t{1} << 40)) {
      return std::nullopt;
    }
    value = value * 10 + (text[i] - '0');
  }
  if (i == 0) {
    return std::nullopt;
  }
  const std::string_view unit = text.substr(i);
  std::int64_t scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  } else if (unit == "w") {
    scale = 7 * 86400;
  } else {
    return std::nullopt;
  }
  return std::chrono::seconds(value * scale);
}

DaemonOptions default_options() {
  DaemonOptions options;
  options.stream.path = default_socket_path();
  options.dgram.path = default_dgram_socket_path();
  options.db_path = db::default_db_path();
  return options;
}

std::string comma_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

}  // namespace trace2d::app
