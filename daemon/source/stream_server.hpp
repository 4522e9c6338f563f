#pragma once
// The AF_UNIX stream listener: one coroutine per git connection, all on a
// small fixed pool of io_context threads.
//
// A connection reads whatever the kernel holds as soon as it is readable,
// frames it into lines and hands them to the pipeline; it never waits for
// parsing or SQLite. Only at the memory bound does it stop reading, for at
// most `overflow_wait`, after which it reads and drops (counted) so that git
// never blocks for long on a stuck collector.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "daemon/pipeline/ingest_sink.hpp"
#include "daemon/pipeline/line_framer.hpp"
#include "daemon/source/asio.hpp"

namespace trace2d::source {

class StreamServer {
 public:
  struct Options {
    pipeline::LineFramer::Limits framing;
    std::chrono::milliseconds overflow_wait{2000};
    std::size_t max_read_per_wakeup = 4 * 1024 * 1024;  // fairness between connections
  };

  // `listener` is bound and listening (by us, or passed in by systemd).
  StreamServer(asio::io_context& io, asio::local::stream_protocol::acceptor listener,
               pipeline::IngestSink& sink, Options options);
  ~StreamServer();
  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;

  void start();
  // Stops accepting now. Open connections keep being read for `grace` so that
  // git processes in flight can finish (closing their socket early would kill
  // them with SIGPIPE at their next event); then what their sockets hold is
  // drained and they are closed. Thread-safe.
  void stop(std::chrono::milliseconds grace);

  [[nodiscard]] std::size_t open_connections() const;

 private:
  class Connection;
  asio::awaitable<void> accept_loop();
  void adopt(asio::local::stream_protocol::socket socket);
  void forget(std::uint64_t id);

  asio::io_context& m_io;
  asio::strand<asio::io_context::executor_type> m_strand;  // the listener's
  asio::local::stream_protocol::acceptor m_listener;
  pipeline::IngestSink& m_sink;
  Options m_options;
  mutable std::mutex m_mutex;
  std::unordered_map<std::uint64_t, std::shared_ptr<Connection>> m_connections;
  bool m_stopping = false;
  std::unique_ptr<asio::steady_timer> m_grace_timer;
};

}  // namespace trace2d::source
