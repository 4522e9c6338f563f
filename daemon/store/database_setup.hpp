#pragma once
// Opens the daemon's database for writing: creates it (mode 0640) and its
// directory, sets the pragmas, applies migrations, and marks sessions left
// `running` by a previous run as `incomplete` (their connections are gone).

#include <string>

#include "daemon/store/sqlite.hpp"

namespace trace2d::store {

struct SetupReport {
  int migrations_applied = 0;
  std::int64_t sessions_marked_incomplete = 0;
};

[[nodiscard]] Database open_for_writing(const std::string& path, SetupReport* report = nullptr);

}  // namespace trace2d::store
