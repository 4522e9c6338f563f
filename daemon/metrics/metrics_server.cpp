#include "daemon/metrics/metrics_server.hpp"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <list>
#include <mutex>
#include <system_error>

namespace trace2d::metrics {

namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

class Connection;

struct MetricsServer::State {
  State(asio::io_context& context, Render r, Limits l)
      : io(context), acceptor(asio::make_strand(context)), render(std::move(r)), limits(l) {}

  asio::io_context& io;
  tcp::acceptor acceptor;
  Render render;
  Limits limits;
  std::atomic<std::size_t> open{0};
  std::mutex mutex;
  bool stopped = false;  // under mutex
  std::list<std::weak_ptr<Connection>> connections;  // under mutex, oldest first

  void accept(const std::shared_ptr<State>& self);
  // True when a new connection may be taken (closing an old one if need be).
  bool make_room();
};

namespace {

http::response<http::string_body> answer(MetricsServer::State& state,
                                         const http::request<http::empty_body>& request) {
  http::response<http::string_body> response;
  response.version(request.version());
  response.keep_alive(request.keep_alive());
  response.set(http::field::server, "trace2d");
  const std::string_view target(request.target().data(), request.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  if (path != "/metrics") {
    response.result(http::status::not_found);
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = "trace2d serves /metrics only\n";
  } else if (request.method() != http::verb::get && request.method() != http::verb::head) {
    response.result(http::status::method_not_allowed);
    response.set(http::field::allow, "GET, HEAD");
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = "GET or HEAD\n";
  } else {
    const auto accept = request[http::field::accept];
    const Format format = format_for_accept(std::string_view(accept.data(), accept.size()));
    response.result(http::status::ok);
    const std::string_view type = content_type(format);
    response.set(http::field::content_type, beast::string_view(type.data(), type.size()));
    std::string body = state.render(format);
    if (request.method() == http::verb::head) {
      response.content_length(body.size());
      return response;
    }
    response.body() = std::move(body);
  }
  response.prepare_payload();
  return response;
}

}  // namespace

using Clock = std::chrono::steady_clock;

// One client connection: read a request, answer, again while it keeps the
// connection alive. Runs on its own strand. The reply is written a piece
// at a time, each piece with its own deadline (`write_stall`) and all of
// them within `timeout`, and the time of the last piece that moved is kept
// for make_room().
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<MetricsServer::State> state, tcp::socket socket)
      : m_state(std::move(state)), m_stream(std::move(socket)), m_buffer(m_state->limits.max_request_bytes) {}
  ~Connection() { m_state->open.fetch_sub(1); }

  // Waiting for (the rest of) a request rather than answering one.
  [[nodiscard]] bool waiting() const { return m_waiting.load(); }

  // While a reply is being written: how long since a byte of it last moved,
  // and since it began. nullopt otherwise.
  [[nodiscard]] std::optional<Clock::duration> stalled_for(Clock::time_point now) const {
    return since(m_progress_at.load(), now);
  }
  [[nodiscard]] std::optional<Clock::duration> replying_for(Clock::time_point now) const {
    return since(m_reply_started.load(), now);
  }

  void start() {
    asio::dispatch(m_stream.get_executor(), [self = shared_from_this()] { self->read(); });
  }
  void close() {
    asio::dispatch(m_stream.get_executor(), [self = shared_from_this()] { self->m_stream.close(); });
  }

 private:
  static constexpr Clock::rep k_not_writing = 0;

  static std::optional<Clock::duration> since(Clock::rep then, Clock::time_point now) {
    if (then == k_not_writing) {
      return std::nullopt;
    }
    return now - Clock::time_point(Clock::duration(then));
  }

  void read() {
    m_waiting = true;
    m_parser.emplace();
    m_parser->header_limit(static_cast<std::uint32_t>(m_state->limits.max_request_bytes));
    m_parser->body_limit(0);
    m_stream.expires_after(m_state->limits.timeout);
    http::async_read(m_stream, m_buffer, *m_parser,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) {
      // Closed, timed out, too large or not HTTP: nothing to answer.
      if (ec != http::error::end_of_stream && ec != beast::error::timeout && ec != asio::error::operation_aborted) {
        spdlog::debug("metrics: dropping a connection: {}", ec.message());
      }
      m_stream.close();
      return;
    }
    m_response = answer(*m_state, m_parser->get());
    m_serializer.emplace(m_response);
    const Clock::time_point now = Clock::now();
    m_reply_deadline = now + m_state->limits.timeout;
    m_reply_started = now.time_since_epoch().count();
    m_progress_at = now.time_since_epoch().count();
    m_waiting = false;
    write_some();
  }

  void write_some() {
    const Clock::time_point now = Clock::now();
    if (now >= m_reply_deadline) {
      finish(beast::error::timeout);
      return;
    }
    m_stream.expires_after(std::min<Clock::duration>(m_state->limits.write_stall, m_reply_deadline - now));
    http::async_write_some(m_stream, *m_serializer,
                           [self = shared_from_this()](beast::error_code ec, std::size_t written) {
                             self->on_written(ec, written);
                           });
  }

  void on_written(beast::error_code ec, std::size_t written) {
    if (!ec && written > 0) {
      m_progress_at = Clock::now().time_since_epoch().count();
    }
    if (!ec && !m_serializer->is_done()) {
      write_some();
      return;
    }
    finish(ec);
  }

  void finish(beast::error_code ec) {
    m_reply_started = k_not_writing;
    m_progress_at = k_not_writing;
    m_serializer.reset();
    if (ec || !m_response.keep_alive()) {
      if (ec == beast::error::timeout) {
        spdlog::debug("metrics: abandoning a reply its client does not read");
      }
      beast::error_code ignored;
      m_stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
      m_stream.close();
      return;
    }
    read();
  }

  std::shared_ptr<MetricsServer::State> m_state;
  beast::tcp_stream m_stream;
  beast::flat_buffer m_buffer;
  std::optional<http::request_parser<http::empty_body>> m_parser;
  http::response<http::string_body> m_response;
  std::optional<http::response_serializer<http::string_body>> m_serializer;
  Clock::time_point m_reply_deadline;
  std::atomic<bool> m_waiting{false};
  std::atomic<Clock::rep> m_reply_started{k_not_writing};
  std::atomic<Clock::rep> m_progress_at{k_not_writing};
};

// Any local user can connect, and TCP on loopback does not say who: a user
// holding every slot must not keep Prometheus out. When full, the oldest
// connection still waiting for its request is closed for the new one (a
// scraper sends its request as soon as it connects, so only a silent
// holder loses its place); failing that, the reply that has moved no byte
// the longest, once stalled `evict_stalled` (or running ten times that): a
// scraper reads its reply at once, a client that asks and never reads
// loses its place. Closing is asynchronous: until the closed ones are
// gone, twice the bound is the hard limit.
bool MetricsServer::State::make_room() {
  if (open.load() < limits.max_connections) {
    return true;
  }
  if (open.load() >= 2 * limits.max_connections) {
    return false;
  }
  std::lock_guard lock(mutex);
  connections.remove_if([](const std::weak_ptr<Connection>& c) { return c.expired(); });
  for (auto it = connections.begin(); it != connections.end(); ++it) {
    const auto oldest = it->lock();
    if (oldest && oldest->waiting()) {
      spdlog::debug("metrics: closing the oldest silent connection to take a new one");
      oldest->close();
      connections.erase(it);
      return true;
    }
  }
  const Clock::time_point now = Clock::now();
  auto victim = connections.end();
  std::shared_ptr<Connection> held;  // kept alive until closed
  Clock::duration longest = Clock::duration::min();
  for (auto it = connections.begin(); it != connections.end(); ++it) {
    const auto connection = it->lock();
    if (!connection) {
      continue;
    }
    const auto stalled = connection->stalled_for(now);
    const auto running = connection->replying_for(now);
    if (!stalled || !running || (*stalled < limits.evict_stalled && *running < 10 * limits.evict_stalled)) {
      continue;
    }
    if (*stalled > longest) {
      longest = *stalled;
      victim = it;
      held = connection;
    }
  }
  if (victim == connections.end()) {
    return false;
  }
  spdlog::debug("metrics: closing a connection that does not read its reply to take a new one");
  held->close();
  connections.erase(victim);
  return true;
}

void MetricsServer::State::accept(const std::shared_ptr<State>& self) {
  acceptor.async_accept(asio::make_strand(io), [self](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !self->acceptor.is_open()) {
      return;  // stopped
    }
    if (ec) {
      // EMFILE and the like: the descriptor table is shared with the
      // sources; wait a little rather than spin.
      spdlog::warn("metrics: accept failed: {}", ec.message());
      auto timer = std::make_shared<asio::steady_timer>(self->acceptor.get_executor(), std::chrono::milliseconds(100));
      timer->async_wait([self, timer](beast::error_code) { self->accept(self); });
      return;
    }
    if (!self->make_room()) {
      beast::error_code ignored;
      socket.close(ignored);  // full of answers in progress: the scraper retries at its next interval
    } else {
      self->open.fetch_add(1);
      auto connection = std::make_shared<Connection>(self, std::move(socket));
      {
        std::lock_guard lock(self->mutex);
        if (self->stopped) {
          return;  // the connection closes as it goes
        }
        self->connections.remove_if([](const std::weak_ptr<Connection>& c) { return c.expired(); });
        self->connections.push_back(connection);
      }
      connection->start();
    }
    self->accept(self);
  });
}

std::optional<tcp::endpoint> parse_listen_address(std::string_view text, std::string& error) {
  std::string_view host = "127.0.0.1";
  std::string_view port_text = text;
  if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    } else if (host.find(':') != std::string_view::npos) {
      error = fmt::format("'{}': an IPv6 address needs brackets, as in [::1]:9464", text);
      return std::nullopt;
    }
  }
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    error = fmt::format("'{}' is not [address:]port (e.g. \"127.0.0.1:9464\", or \"9464\" for loopback)", text);
    return std::nullopt;
  }
  if (host == "localhost") {
    host = "127.0.0.1";
  }
  boost::system::error_code address_ec;
  const asio::ip::address address = asio::ip::make_address(std::string(host), address_ec);
  if (address_ec) {
    error = fmt::format("'{}': '{}' is not an IP address (names are not resolved)", text, host);
    return std::nullopt;
  }
  return tcp::endpoint(address, static_cast<unsigned short>(port));
}

MetricsServer::MetricsServer(asio::io_context& io, const tcp::endpoint& at, Render render, Limits limits)
    : m_state(std::make_shared<State>(io, std::move(render), limits)) {
  const auto fail = [&](const char* what, const boost::system::error_code& ec) {
    throw std::system_error(ec, fmt::format("metrics: cannot {} {}:{}", what, at.address().to_string(), at.port()));
  };
  boost::system::error_code ec;
  if (m_state->acceptor.open(at.protocol(), ec); ec) {
    fail("open a socket for", ec);
  }
  if (m_state->acceptor.set_option(tcp::acceptor::reuse_address(true), ec); ec) {
    fail("set SO_REUSEADDR on", ec);
  }
  if (m_state->acceptor.bind(at, ec); ec) {
    fail("bind", ec);
  }
  if (m_state->acceptor.listen(asio::socket_base::max_listen_connections, ec); ec) {
    fail("listen on", ec);
  }
  m_endpoint = m_state->acceptor.local_endpoint();
}

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::start() {
  asio::dispatch(m_state->acceptor.get_executor(), [state = m_state] { state->accept(state); });
}

void MetricsServer::stop() {
  std::list<std::weak_ptr<Connection>> connections;
  {
    std::lock_guard lock(m_state->mutex);
    if (m_state->stopped) {
      return;
    }
    m_state->stopped = true;
    connections.swap(m_state->connections);
  }
  asio::dispatch(m_state->acceptor.get_executor(), [state = m_state] {
    boost::system::error_code ignored;
    state->acceptor.close(ignored);
  });
  for (const auto& weak : connections) {
    if (const auto connection = weak.lock()) {
      connection->close();
    }
  }
}

}  // namespace trace2d::metrics
