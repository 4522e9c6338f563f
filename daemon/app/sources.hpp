#pragma once
// The daemon's sources, built from the options and the listening sockets:
// the stream server, the datagram receiver and the directory watcher, each
// with its own sink into the backend. Started and stopped together; the
// directory watcher's settings change live on SIGHUP.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/app/backend.hpp"
#include "daemon/app/options.hpp"
#include "daemon/app/status_reporter.hpp"
#include "daemon/ingest/ingest_sink.hpp"
#include "daemon/source/asio.hpp"
#include "daemon/source/dgram_receiver.hpp"
#include "daemon/source/dir_watcher.hpp"
#include "daemon/source/listeners.hpp"
#include "daemon/source/stream_server.hpp"

namespace trace2d::app {

class Sources {
 public:
  // `fd_limit` is RLIMIT_NOFILE once raised: the stream server's bounds are
  // shares of it. Each source is registered with `status`.
  Sources(asio::io_context& io, source::Listeners& listeners, Backend& backend, StatusReporter& status,
          const DaemonOptions& options, std::size_t fd_limit);

  void start();
  // Stop accepting and reading; open connections get `grace` to finish.
  void stop(std::chrono::milliseconds grace);
  // The directories and their settings, as SIGHUP found them.
  void reconfigure_directories(const DaemonOptions& options);

  // What git's GIT_TRACE2_EVENT may name, the preferred one first.
  [[nodiscard]] std::vector<std::string> targets() const;
  // Lines read from the sockets and dropped at the memory bound.

 private:
  [[nodiscard]] static source::DirWatcher::Options dir_options(const DaemonOptions& options);

  std::string m_stream_path;
  std::string m_dgram_path;
  std::vector<std::string> m_dirs;
  std::unique_ptr<ingest::IngestSink> m_stream_sink;
  std::unique_ptr<source::StreamServer> m_stream_server;
  std::unique_ptr<ingest::IngestSink> m_dgram_sink;
  std::unique_ptr<source::DgramReceiver> m_dgram_receiver;
  std::unique_ptr<ingest::IngestSink> m_dir_sink;
  std::unique_ptr<source::DirWatcher> m_dir_watcher;
};

}  // namespace trace2d::app
