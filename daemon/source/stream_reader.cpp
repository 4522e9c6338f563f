#include "daemon/source/stream_reader.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "daemon/source/peer_credentials.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::source {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t k_chunk_bytes = 1024 * 1024;  // hand over at least this often
// While the memory bound holds a connection back, look again this often.
constexpr auto k_over_budget_retry = std::chrono::milliseconds(10);
// After accepting failed (EMFILE and friends), try again this much later:
// never spin.
constexpr auto k_accept_retry = std::chrono::milliseconds(100);
// The listener's epoll tag (connections carry their address, the wake-up
// descriptor nullptr).
char g_listener_tag;

UniqueFd checked(int fd, const char* what) {
  if (fd < 0) {
    throw std::runtime_error(std::string("stream reader: ") + what + ": " + std::strerror(errno));
  }
  return UniqueFd(fd);
}

}  // namespace

class StreamReader::Connection {
 public:
  Connection(UniqueFd socket, const Origin& origin, const pipeline::LineFramer::Limits& framing)
      : m_socket(std::move(socket)), m_origin(origin), m_framer(framing) {}

  [[nodiscard]] int fd() const { return m_socket.get(); }

  // Reads until the socket would block (or `limit` bytes when not 0),
  // adding the bytes read to `total`. False at EOF or on error.
  bool drain(pipeline::IngestSink& sink, std::vector<char>& buffer, bool dropping, std::size_t limit,
             std::size_t& total) {
    while (limit == 0 || total < limit) {
      const ssize_t n = ::recv(m_socket.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      }
      if (n <= 0) {
        if (n < 0 && errno != ECONNRESET) {
          spdlog::debug("stream connection {}: read error: {}", m_origin.channel, std::strerror(errno));
        }
        submit(sink, false);
        return false;
      }
      const auto size = static_cast<std::size_t>(n);
      total += size;
      sink.counters().bytes.fetch_add(size, std::memory_order_relaxed);
      const std::string_view bytes(buffer.data(), size);
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
        submit(sink, false);
      }
    }
    submit(sink, false);
    return true;
  }

  // The last line (even without its '\n'), then the end of the channel.
  void finish(pipeline::IngestSink& sink) {
    m_framer.finish([&](std::string_view line, std::uint64_t full_size) { m_chunk.add_line(line, full_size); });
    submit(sink, true);
    m_socket.reset();
  }

  // Since when the memory bound has held this connection back, if it does.
  std::optional<Clock::time_point> held_since;

 private:
  void submit(pipeline::IngestSink& sink, bool end_of_channel) {
    if (m_chunk.lines.empty() && m_chunk.dropped_lines == 0 && !end_of_channel) {
      return;
    }
    auto& counters = sink.counters();
    counters.lines.fetch_add(m_chunk.lines.size(), std::memory_order_relaxed);
    counters.dropped_lines.fetch_add(m_chunk.dropped_lines, std::memory_order_relaxed);
    counters.dropped_bytes.fetch_add(m_chunk.dropped_bytes, std::memory_order_relaxed);
    m_chunk.origins.assign(1, m_origin);
    m_chunk.received_us = proto::unix_now_us();
    m_chunk.end_of_channel = end_of_channel;
    m_chunk.seal(proto::Parser::padding_bytes());
    sink.submit(std::move(m_chunk));
    m_chunk = pipeline::IngestChunk();
  }

  UniqueFd m_socket;
  Origin m_origin;
  pipeline::LineFramer m_framer;
  pipeline::IngestChunk m_chunk;
};

StreamReader::StreamReader(pipeline::IngestSink& sink, Options options, std::function<void()> on_empty)
    : m_sink(sink),
      m_options(options),
      m_on_empty(std::move(on_empty)),
      m_epoll(checked(::epoll_create1(EPOLL_CLOEXEC), "epoll_create1")),
      m_wake(checked(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd")) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // the wake-up descriptor; connections carry their address
  if (::epoll_ctl(m_epoll.get(), EPOLL_CTL_ADD, m_wake.get(), &ev) != 0) {
    throw std::runtime_error(std::string("stream reader: epoll_ctl: ") + std::strerror(errno));
  }
  m_thread = std::thread([this] {
    pthread_setname_np(pthread_self(), "trace2d-stream");
    run();
  });
}

StreamReader::~StreamReader() {
  m_closing.store(true);
  m_stopping.store(true);
  wake();
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

void StreamReader::add(UniqueFd socket, const Origin& origin) {
  m_sink.counters().channels_opened.fetch_add(1, std::memory_order_relaxed);
  m_sink.counters().channels_open.fetch_add(1, std::memory_order_relaxed);
  auto connection = std::make_unique<Connection>(std::move(socket), origin, m_options.framing);
  Connection& c = *connection;
  {
    std::lock_guard lock(m_mutex);
    m_connections.emplace(&c, std::move(connection));
  }
  register_connection(c, EPOLLIN | EPOLLRDHUP | EPOLLONESHOT);
  if (m_closing.load()) {
    wake();  // added after close_all(): drained at once like the others
  }
}

void StreamReader::register_connection(Connection& connection, std::uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = &connection;
  if (::epoll_ctl(m_epoll.get(), EPOLL_CTL_ADD, connection.fd(), &ev) != 0) {
    // Out of kernel memory: it would never be read. Say so; it is closed
    // (and what it already holds read) with the others at shutdown.
    spdlog::error("stream connection: cannot watch it: {}", std::strerror(errno));
  }
}

void StreamReader::accept_from(int listener) {
  m_listener.store(listener);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.ptr = &g_listener_tag;
  if (::epoll_ctl(m_epoll.get(), EPOLL_CTL_ADD, listener, &ev) != 0) {
    throw std::runtime_error(std::string("stream reader: epoll_ctl on the listener: ") + std::strerror(errno));
  }
}

void StreamReader::arm_listener() {
  const int listener = m_listener.load();
  if (listener < 0) {
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.ptr = &g_listener_tag;
  if (::epoll_ctl(m_epoll.get(), EPOLL_CTL_MOD, listener, &ev) != 0) {
    spdlog::error("stream: epoll_ctl on the listener: {}", std::strerror(errno));
  }
}

void StreamReader::stop_accepting() {
  std::unique_lock lock(m_mutex);
  if (m_listener.load() < 0 || !m_thread.joinable()) {
    return;
  }
  m_listener_release_asked = true;
  lock.unlock();
  wake();
  lock.lock();
  m_listener_cv.wait(lock, [this] { return m_listener_released; });
}

void StreamReader::release_listener() {
  const int listener = m_listener.exchange(-1);
  if (listener >= 0) {
    accept_pending(listener, Clock::now());
    ::epoll_ctl(m_epoll.get(), EPOLL_CTL_DEL, listener, nullptr);
  }
  std::lock_guard lock(m_mutex);
  m_listener_released = true;
  m_listener_cv.notify_all();
}

bool StreamReader::accept_pending(int listener, Clock::time_point now) {
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      adopt(UniqueFd(fd), now);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) {
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return true;
    }
    if (now >= m_next_accept_warning) {  // at most once a second: EMFILE can last
      spdlog::warn("stream: accept failed: {}; retrying every {} ms", std::strerror(errno), k_accept_retry.count());
      m_next_accept_warning = now + std::chrono::seconds(1);
    }
    return false;
  }
}

void StreamReader::adopt(UniqueFd socket, Clock::time_point now) {
  Origin origin;
  origin.kind = SourceKind::stream;
  origin.channel = m_sink.next_channel_id();
  const PeerCredentials peer = peer_credentials(socket.get());
  origin.peer_pid = peer.pid;
  origin.peer_uid = peer.uid;
  m_sink.counters().channels_opened.fetch_add(1, std::memory_order_relaxed);
  m_sink.counters().channels_open.fetch_add(1, std::memory_order_relaxed);
  auto connection = std::make_unique<Connection>(std::move(socket), origin, m_options.framing);
  Connection& c = *connection;
  {
    std::lock_guard lock(m_mutex);
    m_connections.emplace(&c, std::move(connection));
  }
  if (m_options.read_pacing.count() <= 0 || m_closing.load()) {
    register_connection(c, EPOLLIN | EPOLLRDHUP | EPOLLONESHOT);
    return;
  }
  // A new git process writes its first events right after connecting: let
  // them gather. Its exit (the peer closing) wakes the reader at once, so
  // a short process is usually read whole in that one wake-up.
  register_connection(c, EPOLLRDHUP | EPOLLONESHOT);
  m_paced.push_back({now + m_options.read_pacing, &c});
}

void StreamReader::close_all() {
  m_closing.store(true);
  wake();
}

std::size_t StreamReader::open_connections() const {
  std::lock_guard lock(m_mutex);
  return m_connections.size();
}

void StreamReader::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(m_wake.get(), &one, sizeof one);
}

void StreamReader::arm(Connection& connection) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  ev.data.ptr = &connection;
  if (::epoll_ctl(m_epoll.get(), EPOLL_CTL_MOD, connection.fd(), &ev) != 0) {
    spdlog::warn("stream connection: epoll_ctl: {}", std::strerror(errno));
  }
}

void StreamReader::finish(Connection& connection) {
  connection.finish(m_sink);  // closing the descriptor takes it out of the epoll set
  m_sink.counters().channels_open.fetch_sub(1, std::memory_order_relaxed);
  std::erase_if(m_paced, [&](const Paced& p) { return p.connection == &connection; });
  bool empty = false;
  {
    std::lock_guard lock(m_mutex);
    m_connections.erase(&connection);
    empty = m_connections.empty();
  }
  if (empty && m_on_empty) {
    m_on_empty();
  }
}

void StreamReader::service(Connection& connection, Clock::time_point now) {
  bool dropping = false;
  if (m_sink.over_budget()) {
    // Hold off: git's writes wait in the kernel buffer meanwhile.
    if (!connection.held_since) {
      connection.held_since = now;
    }
    if (now - *connection.held_since < m_options.overflow_wait) {
      m_paced.push_back({now + k_over_budget_retry, &connection});
      return;
    }
    dropping = true;
  } else {
    connection.held_since.reset();
  }
  std::size_t got = 0;
  if (!connection.drain(m_sink, m_buffer, dropping, m_options.max_read_per_wakeup, got)) {
    finish(connection);
    return;
  }
  if (got > 0 && got < m_options.trickle_bytes && m_options.read_pacing.count() > 0) {
    m_paced.push_back({now + m_options.read_pacing, &connection});
  } else {
    arm(connection);
  }
}

void StreamReader::close_everything() {
  std::vector<Connection*> open;
  {
    std::lock_guard lock(m_mutex);
    for (const auto& [address, connection] : m_connections) {
      open.push_back(address);
    }
  }
  for (Connection* connection : open) {
    std::size_t got = 0;
    while (connection->drain(m_sink, m_buffer, false, 0, got)) {
      // Drained what the kernel held; a client still writing gets no more.
      break;
    }
    finish(*connection);
  }
}

void StreamReader::run() {
  std::array<epoll_event, 256> events{};
  while (true) {
    int timeout_ms = -1;
    if (!m_paced.empty()) {
      const auto next = std::min_element(m_paced.begin(), m_paced.end(),
                                         [](const Paced& a, const Paced& b) { return a.due < b.due; })
                            ->due;
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<std::int64_t>(wait, 0, 1000));
    }
    const int n = ::epoll_wait(m_epoll.get(), events.data(), static_cast<int>(events.size()), timeout_ms);
    if (n < 0 && errno != EINTR) {
      spdlog::error("stream reader: epoll_wait: {}", std::strerror(errno));
    }
    const auto now = Clock::now();
    bool woken = false;
    for (int i = 0; i < n; ++i) {
      void* tag = events[static_cast<std::size_t>(i)].data.ptr;
      if (tag == nullptr) {
        woken = true;
        continue;
      }
      if (tag == &g_listener_tag) {
        const int listener = m_listener.load();
        if (listener < 0) {
          continue;
        }
        if (!accept_pending(listener, now)) {
          m_paced.push_back({now + k_accept_retry, nullptr});
        } else if (m_options.read_pacing.count() > 0) {
          // connect() completes in the backlog and git writes meanwhile:
          // accepting a little later takes in more processes per wake-up,
          // often already finished and read whole at once.
          m_paced.push_back({now + m_options.read_pacing, nullptr});
        } else {
          arm_listener();
        }
        continue;
      }
      service(*static_cast<Connection*>(tag), now);
    }
    if (woken) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t r = ::read(m_wake.get(), &count, sizeof count);
      bool release = false;
      {
        std::lock_guard lock(m_mutex);
        release = m_listener_release_asked && !m_listener_released;
      }
      if (release) {
        release_listener();
      }
    }
    if (m_closing.load()) {
      if (std::any_of(m_paced.begin(), m_paced.end(), [](const Paced& p) { return p.connection == nullptr; })) {
        arm_listener();
      }
      m_paced.clear();
      close_everything();
      if (m_stopping.load()) {
        return;
      }
      continue;
    }
    // Connections whose pause is over: armed again, so that what they
    // gathered meanwhile wakes the next epoll_wait at once.
    std::erase_if(m_paced, [&](const Paced& p) {
      if (p.due > now) {
        return false;
      }
      if (p.connection == nullptr) {
        arm_listener();
      } else {
        arm(*p.connection);
      }
      return true;
    });
  }
}

}  // namespace trace2d::source
