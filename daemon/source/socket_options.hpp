#pragma once
// How a listening socket is bound: where, and who may connect.

#include <string>

namespace trace2d::source {

struct SocketOptions {
  std::string path;     // empty: this socket is disabled
  unsigned mode = 0666;  // every local user's git may connect
  std::string owner;    // user name or uid; empty: leave as created
  std::string group;    // group name or gid; empty: leave as created
};

// For the settings: "" when `name` is empty, a number, or a user (group)
// of this host, else why not; so that --check-config refuses what start-up
// would refuse, naming the key (listeners.cpp applies them).
[[nodiscard]] std::string socket_owner_problem(const std::string& name);
[[nodiscard]] std::string socket_group_problem(const std::string& name);

}  // namespace trace2d::source
