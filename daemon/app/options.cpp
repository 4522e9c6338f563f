#include "daemon/app/options.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "trace2d/version.hpp"

namespace trace2d::app {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] == '/' ? std::string(value) : fallback;
}

std::string home() { return env_or("HOME", "/tmp"); }

std::string runtime_dir() {
  if (::geteuid() == 0) {
    return "/run/trace2d";
  }
  return env_or("XDG_RUNTIME_DIR", "/tmp/trace2d-" + std::to_string(::geteuid())) + "/trace2d";
}

}  // namespace

std::string default_socket_path() { return runtime_dir() + "/trace2d.sock"; }

std::string default_dgram_socket_path() { return runtime_dir() + "/trace2d-dgram.sock"; }

std::string system_db_path() { return "/var/lib/trace2d/trace2d.db"; }

std::string default_db_path() {
  if (::geteuid() == 0) {
    return system_db_path();
  }
  return env_or("XDG_STATE_HOME", home() + "/.local/state") + "/trace2d/trace2d.db";
}

std::string default_config_path() { return k_default_config_path; }

DaemonOptions default_options() {
  DaemonOptions options;
  options.stream.path = default_socket_path();
  options.dgram.path = default_dgram_socket_path();
  options.db_path = default_db_path();
  return options;
}

}  // namespace trace2d::app
