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

}  // namespace trace2d::source
