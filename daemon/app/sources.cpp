#include "daemon/app/sources.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace trace2d::app {
namespace {

ingest::LineFramer::Limits framing_of(const DaemonOptions& options) {
  ingest::LineFramer::Limits framing;
  framing.max_line_bytes = options.max_line_bytes;
  return framing;
}

source::StreamServer::Options stream_options(const DaemonOptions& options, std::size_t fd_limit) {
  source::StreamServer::Options o = options.stream_reader;
  o.framing = framing_of(options);
  o.overflow_wait = options.overflow_wait;
  // Descriptors beyond the connections are kept for the database, trace
  // files and the listeners, so that one user's connections never leave
  // trace2d unable to accept anyone else's.
  o.max_connections = std::max<std::size_t>(16, fd_limit - std::min<std::size_t>(fd_limit / 4, 1024));
  // One uid may take all but what is kept for the others (a quarter, at
  // most 1024): a burst of one user's short processes is not cut short.
  o.max_connections_per_uid = options.per_uid_connections > 0
                                  ? options.per_uid_connections
                                  : o.max_connections - std::min<std::size_t>(o.max_connections / 4, 1024);
  o.max_partial_bytes_per_uid = options.max_line_bytes + 64 * 1024;
  return o;
}

}  // namespace

source::DirWatcher::Options Sources::dir_options(const DaemonOptions& options) {
  source::DirWatcher::Options o = options.directories;
  o.framing = framing_of(options);
  return o;
}

Sources::Sources(asio::io_context& io, source::Listeners& listeners, Backend& backend, StatusReporter& status,
                 const DaemonOptions& options, std::size_t fd_limit)
    : m_stream_path(listeners.stream_path), m_dgram_path(listeners.dgram_path), m_dirs(options.directories.dirs) {
  if (listeners.stream) {
    m_stream_sink = backend.make_sink();
    const source::StreamServer::Options o = stream_options(options, fd_limit);
    spdlog::info("stream: at most {} connections, {} per uid (descriptor limit {})", o.max_connections,
                 o.max_connections_per_uid, fd_limit);
    m_stream_server = std::make_unique<source::StreamServer>(io, std::move(*listeners.stream), *m_stream_sink, o);
    status.add_source({ingest::SourceKind::stream, m_stream_path, m_stream_sink.get(), {}, {}});
  }
  if (listeners.dgram) {
    m_dgram_sink = backend.make_sink();
    source::DgramReceiver::Options o = options.dgram_receiver;
    o.max_line_bytes = options.max_line_bytes;
    o.overflow_wait = options.overflow_wait;
    m_dgram_receiver = std::make_unique<source::DgramReceiver>(std::move(*listeners.dgram), *m_dgram_sink, o);
    status.add_source({ingest::SourceKind::dgram, m_dgram_path, m_dgram_sink.get(),
                       [receiver = m_dgram_receiver.get()] { return receiver->kernel_drops(); }, {}});
  }
  m_dir_sink = backend.make_sink();
  m_dir_watcher = std::make_unique<source::DirWatcher>(io, *m_dir_sink, options.db_path, dir_options(options));
  status.add_source({ingest::SourceKind::dir, comma_list(m_dirs), m_dir_sink.get(), {},
                     [watcher = m_dir_watcher.get()] { return watcher->sentinels_seen(); }});
}

void Sources::start() {
  if (m_stream_server) {
    m_stream_server->start();
  }
  if (m_dgram_receiver) {
    m_dgram_receiver->start();
    const std::size_t buffer = m_dgram_receiver->receive_buffer();
    const std::size_t wanted = m_dgram_receiver->wanted_receive_buffer();
    if (buffer < wanted) {
      spdlog::warn("dgram socket {}: receive buffer {} bytes, less than the {} asked for "
                   "(dgram.receive_buffer_bytes): raise net.core.rmem_max or run with CAP_NET_ADMIN "
                   "(systemd: ReceiveBuffer=)",
                   m_dgram_path, buffer, wanted);
    } else {
      spdlog::info("dgram socket {}: receive buffer {} bytes", m_dgram_path, buffer);
    }
  }
  m_dir_watcher->start();
}

void Sources::stop(std::chrono::milliseconds grace) {
  if (m_stream_server) {
    m_stream_server->stop(grace);
  }
  if (m_dgram_receiver) {
    m_dgram_receiver->stop();
  }
  m_dir_watcher->stop();
}

void Sources::reconfigure_directories(const DaemonOptions& options) {
  spdlog::info("SIGHUP: directories [{}] -> [{}]", comma_list(m_dirs), comma_list(options.directories.dirs));
  m_dirs = options.directories.dirs;
  m_dir_watcher->reconfigure(dir_options(options));
}

std::vector<std::string> Sources::targets() const {
  std::vector<std::string> targets;
  if (m_stream_server) {
    targets.push_back("af_unix:stream:" + m_stream_path);
  }
  if (m_dgram_receiver) {
    targets.push_back("af_unix:dgram:" + m_dgram_path);
  }
  for (const auto& dir : m_dirs) {
    targets.push_back(dir + "/");
  }
  return targets;
}

}  // namespace trace2d::app
