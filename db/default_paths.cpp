#include "db/default_paths.hpp"

#include <unistd.h>

#include <cstdlib>

namespace trace2d::db {
namespace {

// Only absolute values count: a relative XDG path would depend on the
// working directory the program was started from.
std::string absolute_env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] == '/' ? std::string(value) : fallback;
}

}  // namespace

std::string system_db_path() { return "/var/lib/trace2d/trace2d.db"; }

std::string default_db_path() {
  if (::geteuid() == 0) {
    return system_db_path();
  }
  const std::string home = absolute_env_or("HOME", "/tmp");
  return absolute_env_or("XDG_STATE_HOME", home + "/.local/state") + "/trace2d/trace2d.db";
}

}  // namespace trace2d::db
