#pragma once
// Everything the daemon can be told, with its embedded defaults.

#include <chrono>
#include <cstddef>
#include <string>

namespace trace2d::app {

struct DaemonOptions {
  std::string socket_path;
  std::string db_path;
  unsigned socket_mode = 0666;  // every local user's git may connect
  unsigned io_threads = 1;
  std::size_t max_queue_bytes = 64 * 1024 * 1024;
  std::chrono::milliseconds overflow_wait{2000};
  std::size_t max_line_bytes = 4608 * 1024;
  std::chrono::milliseconds shutdown_grace{2000};
  std::chrono::milliseconds commit_interval{10};
  std::chrono::milliseconds store_give_up_after{30000};  // at shutdown, on a failing database
  std::string log_level = "info";
};

// Paths for the user running the program: system paths for root
// (/run/trace2d/trace2d.sock, /var/lib/trace2d/trace2d.db), per-user paths
// (XDG runtime and state directories) for everyone else.
[[nodiscard]] std::string default_socket_path();
[[nodiscard]] std::string default_db_path();

[[nodiscard]] DaemonOptions default_options();

}  // namespace trace2d::app
