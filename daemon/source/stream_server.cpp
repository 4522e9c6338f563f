#include "daemon/source/stream_server.hpp"

#include <spdlog/spdlog.h>

#include <vector>

#include "daemon/source/peer_credentials.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::source {
namespace {

using stream = asio::local::stream_protocol;
constexpr std::size_t k_read_buffer = 256 * 1024;
constexpr std::size_t k_chunk_bytes = 1024 * 1024;  // hand over at least this often

std::vector<char>& read_buffer() {
  thread_local std::vector<char> buffer(k_read_buffer);
  return buffer;
}

}  // namespace

class StreamServer::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(StreamServer& server, stream::socket socket, std::uint64_t id)
      : m_server(server),
        m_socket(std::move(socket)),
        m_timer(m_socket.get_executor()),
        m_framer(server.m_options.framing) {
    m_origin.kind = SourceKind::stream;
    m_origin.channel = id;
    const PeerCredentials peer = peer_credentials(m_socket.native_handle());
    m_origin.peer_pid = peer.pid;
    m_origin.peer_uid = peer.uid;
  }

  asio::awaitable<void> run() {
    boost::system::error_code ec;
    m_socket.non_blocking(true, ec);
    while (!ec) {
      bool dropping = false;
      if (!m_closing && m_server.m_sink.over_budget()) {
        // Hold off: git's writes wait in the kernel buffer meanwhile.
        const auto deadline = std::chrono::steady_clock::now() + m_server.m_options.overflow_wait;
        while (!m_closing && m_server.m_sink.over_budget() &&
               std::chrono::steady_clock::now() < deadline) {
          m_timer.expires_after(std::chrono::milliseconds(10));
          boost::system::error_code timer_ec;
          co_await m_timer.async_wait(asio::redirect_error(asio::use_awaitable, timer_ec));
        }
        dropping = !m_closing && m_server.m_sink.over_budget();
      }
      if (!m_closing) {
        co_await m_socket.async_wait(stream::socket::wait_read,
                                     asio::redirect_error(asio::use_awaitable, ec));
        if (ec == asio::error::operation_aborted) {
          ec = {};  // close_now(): drain below, then stop
        }
        if (ec) {
          break;
        }
      }
      if (!drain(dropping) || m_closing) {
        break;
      }
    }
    m_framer.finish([&](std::string_view line, std::uint64_t full_size) {
      m_chunk.add_line(line, full_size);
    });
    submit(true);
    m_socket.close(ec);
    m_server.forget(m_origin.channel);
  }

  [[nodiscard]] stream::socket::executor_type executor() { return m_socket.get_executor(); }

  // Reads the rest of what the socket holds, then ends. Any thread.
  void close_now() {
    asio::post(m_socket.get_executor(), [self = shared_from_this()] {
      self->m_closing = true;
      boost::system::error_code ignored;
      self->m_socket.cancel(ignored);
      self->m_timer.cancel();
    });
  }

 private:
  // Reads until the socket would block. False at EOF or on error.
  bool drain(bool dropping) {
    auto& buffer = read_buffer();
    std::size_t total = 0;
    while (m_closing || total < m_server.m_options.max_read_per_wakeup) {
      boost::system::error_code ec;
      const std::size_t n = m_socket.read_some(asio::buffer(buffer), ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) {
        break;
      }
      if (ec || n == 0) {
        if (ec && ec != asio::error::eof && ec != asio::error::connection_reset) {
          spdlog::debug("stream connection {}: read error: {}", m_origin.channel, ec.message());
        }
        submit(false);
        return false;
      }
      total += n;
      m_server.m_sink.counters().bytes.fetch_add(n, std::memory_order_relaxed);
      const std::string_view bytes(buffer.data(), n);
      if (dropping) {
        m_framer.feed(bytes, [&](std::string_view, std::uint64_t full_size) {
          ++m_chunk.dropped_lines;
          m_chunk.dropped_bytes += full_size;
        });
      } else {
        m_framer.feed(bytes, [&](std::string_view line, std::uint64_t full_size) {
          m_chunk.add_line(line, full_size);
        });
      }
      if (m_chunk.bytes.size() >= k_chunk_bytes) {
        submit(false);
      }
    }
    submit(false);
    return true;
  }

  void submit(bool end_of_channel) {
    if (m_chunk.lines.empty() && m_chunk.dropped_lines == 0 && !end_of_channel) {
      return;
    }
    auto& counters = m_server.m_sink.counters();
    counters.lines.fetch_add(m_chunk.lines.size(), std::memory_order_relaxed);
    counters.dropped_lines.fetch_add(m_chunk.dropped_lines, std::memory_order_relaxed);
    counters.dropped_bytes.fetch_add(m_chunk.dropped_bytes, std::memory_order_relaxed);
    m_chunk.origins.assign(1, m_origin);
    m_chunk.received_us = proto::unix_now_us();
    m_chunk.end_of_channel = end_of_channel;
    m_chunk.seal(proto::Parser::padding_bytes());
    m_server.m_sink.submit(std::move(m_chunk));
    m_chunk = pipeline::IngestChunk();
  }

  StreamServer& m_server;
  stream::socket m_socket;
  asio::steady_timer m_timer;
  pipeline::LineFramer m_framer;
  pipeline::IngestChunk m_chunk;
  Origin m_origin;
  bool m_closing = false;
};

StreamServer::StreamServer(asio::io_context& io, stream::acceptor listener,
                           pipeline::IngestSink& sink, Options options)
    : m_io(io),
      m_strand(asio::make_strand(io)),
      m_listener(std::move(listener)),
      m_sink(sink),
      m_options(options) {}

StreamServer::~StreamServer() = default;

void StreamServer::start() {
  asio::co_spawn(m_strand, accept_loop(), asio::detached);
}

asio::awaitable<void> StreamServer::accept_loop() {
  asio::steady_timer pause(m_strand);
  while (m_listener.is_open()) {
    boost::system::error_code ec;
    stream::socket socket = co_await m_listener.async_accept(
        asio::make_strand(m_io), asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {
      // Even when stop() closed the listener meanwhile: this client is in.
      adopt(std::move(socket));
      continue;
    }
    if (ec == asio::error::operation_aborted || !m_listener.is_open()) {
      break;
    }
    // EMFILE and friends: say so, pause, retry; never spin.
    spdlog::warn("stream: accept failed: {}; retrying in 100 ms", ec.message());
    pause.expires_after(std::chrono::milliseconds(100));
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

void StreamServer::adopt(stream::socket socket) {
  const std::uint64_t id = m_sink.next_channel_id();
  auto connection = std::make_shared<Connection>(*this, std::move(socket), id);
  {
    std::lock_guard lock(m_mutex);
    if (m_stopping) {
      connection->close_now();
    }
    m_connections.emplace(id, connection);
  }
  m_sink.counters().channels_opened.fetch_add(1, std::memory_order_relaxed);
  m_sink.counters().channels_open.fetch_add(1, std::memory_order_relaxed);
  asio::co_spawn(connection->executor(), connection->run(), asio::detached);
}

void StreamServer::forget(std::uint64_t id) {
  bool last_one = false;
  {
    std::lock_guard lock(m_mutex);
    m_connections.erase(id);
    last_one = m_stopping && m_connections.empty();
  }
  m_sink.counters().channels_open.fetch_sub(1, std::memory_order_relaxed);
  if (last_one) {
    // Nothing left to wait for: end the grace period so the daemon can exit.
    asio::post(m_strand, [this] {
      if (m_grace_timer) {
        m_grace_timer->cancel();
      }
    });
  }
}

void StreamServer::stop(std::chrono::milliseconds grace) {
  asio::post(m_strand, [this, grace] {
    {
      std::lock_guard lock(m_mutex);
      m_stopping = true;
    }
    // Clients whose connect() completed are still in the backlog: their
    // writes are in the kernel already. Take them in before closing.
    boost::system::error_code ec;
    m_listener.non_blocking(true, ec);
    while (!ec) {
      stream::socket socket(asio::make_strand(m_io));
      m_listener.accept(socket, ec);
      if (!ec) {
        adopt(std::move(socket));
      }
    }
    m_listener.close(ec);
    const auto close_all = [this] {
      std::lock_guard lock(m_mutex);
      for (auto& [id, connection] : m_connections) {
        connection->close_now();
      }
    };
    bool idle = false;
    {
      std::lock_guard lock(m_mutex);
      idle = m_connections.empty();
    }
    if (grace.count() <= 0 || idle) {
      close_all();
      return;
    }
    m_grace_timer = std::make_unique<asio::steady_timer>(m_strand, grace);
    m_grace_timer->async_wait([close_all](const boost::system::error_code&) { close_all(); });
  });
}

std::size_t StreamServer::open_connections() const {
  std::lock_guard lock(m_mutex);
  return m_connections.size();
}

}  // namespace trace2d::source
