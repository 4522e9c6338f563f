#pragma once
// The AF_UNIX stream socket: its listener, handed to the StreamReader, which
// accepts and reads every connection on its own thread (stream_reader.hpp
// says why not through Asio), and the daemon's stop with its grace period.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "daemon/ingest/ingest_sink.hpp"
#include "daemon/source/asio.hpp"
#include "daemon/source/stream_reader.hpp"

namespace trace2d::source {

class StreamServer {
 public:
  using Options = StreamReader::Options;

  // `listener` is bound and listening (by us, or passed in by systemd).
  StreamServer(asio::io_context& io, asio::local::stream_protocol::acceptor listener,
               ingest::IngestSink& sink, Options options);
  ~StreamServer();
  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;

  void start();
  // Stops accepting now. Open connections keep being read for `grace` so that
  // git processes in flight can finish (closing their socket early would kill
  // them with SIGPIPE at their next event); then what their sockets hold is
  // drained and they are closed. Until then the io_context has work (run()
  // does not return). Thread-safe.
  void stop(std::chrono::milliseconds grace);

  [[nodiscard]] std::size_t open_connections() const { return m_reader.open_connections(); }

 private:
  void close_all();

  asio::io_context& m_io;
  asio::strand<asio::io_context::executor_type> m_strand;  // the listener's
  asio::local::stream_protocol::acceptor m_listener;  // until start()
  UniqueFd m_listener_fd;                             // from start()
  std::atomic<bool> m_stop_requested{false};          // read by the reader's thread
  StreamReader m_reader;
  // Keeps io_context::run() going while the reader may still hand over lines.
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> m_work;
  bool m_stopping = false;     // on m_strand
  bool m_closing_all = false;  // on m_strand
  std::unique_ptr<asio::steady_timer> m_grace_timer;
};

}  // namespace trace2d::source
