#pragma once
// Wires the parts together and runs them until SIGTERM/SIGINT:
//
//   sources (io threads) -> IngestChunk queue -> IngestWorker (parse, stitch,
//   encode) -> WriteBatch queue -> StoreWriter (SQLite)
//
// Shutdown runs the same way data flows: stop accepting, drain connections,
// let the worker finish, let the writer commit, exit 0.

#include "daemon/app/options.hpp"

namespace trace2d::app {

class Daemon {
 public:
  explicit Daemon(DaemonOptions options) : m_options(std::move(options)) {}
  // Blocks until stopped by a signal; returns the process exit code.
  // Throws on start-up failures (socket taken, database unusable...).
  int run();

 private:
  DaemonOptions m_options;
};

}  // namespace trace2d::app
