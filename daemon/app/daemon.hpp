#pragma once
// Wires the parts together and runs them until SIGTERM/SIGINT:
//
//   sources (io threads) -> IngestChunk queue -> IngestWorker (parse, stitch,
//   encode) -> WriteBatch queue -> StoreWriter (SQLite)
//
// Shutdown runs the same way data flows: stop accepting, drain connections,
// let the worker finish, let the writer commit, exit 0. SIGHUP re-reads the
// configuration and applies what can change while running.

#include <functional>
#include <optional>

#include "daemon/app/options.hpp"

namespace trace2d::app {

class Backend;
class Sources;

class Daemon {
 public:
  // Produces the options anew for SIGHUP (the file re-read, flags on top);
  // nullopt when they are invalid (the reason already logged).
  using Reloader = std::function<std::optional<DaemonOptions>()>;

  explicit Daemon(DaemonOptions options, Reloader reloader = {})
      : m_options(std::move(options)), m_reloader(std::move(reloader)) {}
  // Blocks until stopped by a signal; returns the process exit code.
  // Throws on start-up failures (socket taken, database unusable...).
  int run();

 private:
  // SIGHUP: re-reads the configuration, applies the settings that change
  // live and names those that need a restart.
  void reload(Sources& sources, Backend& backend);

  DaemonOptions m_options;
  std::size_t m_fd_limit = 1024;  // RLIMIT_NOFILE, once raised
  Reloader m_reloader;
};

// Applies a log level name ("info", ...); false if unknown.
bool apply_log_level(const std::string& level);

}  // namespace trace2d::app
