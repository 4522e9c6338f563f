#include "daemon/source/stream_reader.hpp"

#include <pthread.h>
#include <fmt/format.h>
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
#include <thread>

#include "daemon/source/peer_credentials.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::source {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t k_chunk_bytes = 1024 * 1024;  // hand over at least this often
// While the memory bound holds a connection back, look again this often.
constexpr auto k_over_budget_retry = std::chrono::milliseconds(10);
// At shutdown, how long the last reads wait in all for the pipeline to make
// room before a uid past its share has the rest dropped: a single user's
// backlog at SIGTERM is usually through in far less.
constexpr auto k_final_wait = std::chrono::milliseconds(1000);
// After accepting failed (EMFILE and friends), try again this much later:
// never spin.
constexpr auto k_accept_retry = std::chrono::milliseconds(100);
// Reads that free places at the connection bound (reap_finished) drop past
// this share of the memory bound, not at it.
constexpr double k_reap_share = 4.0;
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
  Connection(UniqueFd socket, const ingest::Origin& origin, const ingest::LineFramer::Limits& framing)
      : m_socket(std::move(socket)), m_origin(origin), m_framer(framing) {}

  [[nodiscard]] int fd() const { return m_socket.get(); }
  [[nodiscard]] const ingest::Origin& origin() const { return m_origin; }
  [[nodiscard]] std::int64_t uid() const { return m_origin.peer_uid.value_or(-1); }
  [[nodiscard]] bool has_partial_line() const { return m_framer.has_partial_line(); }
  // Bytes its framer holds now: unfinished lines, outside any chunk.
  [[nodiscard]] std::size_t partial_bytes() const { return m_framer.buffered_bytes(); }
  // What of it is the line itself (the allocation may be up to twice that).
  [[nodiscard]] std::size_t partial_line_bytes() const { return m_framer.kept_bytes(); }
  void cut_partial_line(std::size_t keep) { m_framer.cut_short(keep); }

  // Closed by trace2d, not by the peer: why, for the reject row.
  void close_because(std::string reason) { chunk().refused = std::move(reason); }

  // Reads until the socket would block (or `limit` bytes when not 0),
  // adding the bytes read to `total`. False at EOF or on error.
  bool drain(ingest::IngestSink& sink, std::vector<char>& buffer, bool dropping, std::size_t limit,
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
        // Every caller finishes the connection now: what it read goes with
        // the end of the channel, one chunk (and one hand-over to the
        // pipeline) for a short process rather than two.
        return false;
      }
      const auto size = static_cast<std::size_t>(n);
      total += size;
      last_read = Clock::now();
      heard = true;
      sink.counters().bytes.fetch_add(size, std::memory_order_relaxed);
      const std::string_view bytes(buffer.data(), size);
      if (dropping) {
        m_framer.feed_heads(bytes, [&](std::string_view line, std::uint64_t full_size) {
          chunk().drop_line(line, full_size);
        });
      } else {
        ingest::IngestChunk& into = chunk();
        if (into.bytes.empty()) {
          // A short process is usually read whole in this one recv(): one
          // allocation of the right size (with the parser's padding) instead
          // of a doubling every few lines. Later reads grow it as usual.
          into.bytes.reserve(size + proto::Parser::padding_bytes());
          into.lines.reserve(static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n')));
        }
        m_framer.feed(bytes, [&](std::string_view line, std::uint64_t full_size) {
          into.add_line(line, full_size);
        });
      }
      if (m_chunk && m_chunk->bytes.size() >= k_chunk_bytes) {
        submit(sink, false);
      }
    }
    submit(sink, false);
    return true;
  }

  // Its writer has exited: said once, after what it had sent.
  void report_writer_exit(ingest::IngestSink& sink) {
    writer_exit_reported = true;
    chunk().writer_exited = true;
    submit(sink, false);
  }

  // The last line (even without its '\n'), then the end of the channel.
  void finish(ingest::IngestSink& sink) {
    m_framer.finish([&](std::string_view line, std::uint64_t full_size) { chunk().add_line(line, full_size); });
    submit(sink, true);
    m_socket.reset();
  }

  // Since when the memory bound has held this connection back, if it does.
  std::optional<Clock::time_point> held_since;
  Clock::time_point last_read = Clock::now();
  bool heard = false;            // it has sent something
  bool writer_exit_reported = false;
  std::size_t charged = 0;       // partial_bytes() as last charged to the budget
  std::size_t line_counted = 0;  // partial_line_bytes() as last counted for its uid
  // Where it is in its uid's Holder (not for connections handed in by add()).
  std::optional<std::list<Connection*>::iterator> held_at;
  // Its entry among the paced connections, while it waits there.
  std::optional<Paced::Handle> paced_at;

 private:
  void submit(ingest::IngestSink& sink, bool end_of_channel) {
    if (!end_of_channel && (!m_chunk || (m_chunk->lines.empty() && m_chunk->dropped_lines == 0 &&
                                         m_chunk->refused.empty() && !m_chunk->writer_exited))) {
      return;
    }
    ingest::IngestChunk& out = chunk();
    out.origins.assign(1, m_origin);
    out.end_of_channel = end_of_channel;
    if (!out.refused.empty()) {
      sink.counters().channels_refused.fetch_add(1, std::memory_order_relaxed);
    }
    sink.submit(std::move(out));
    m_chunk.reset();
  }

  UniqueFd m_socket;
  ingest::Origin m_origin;
  ingest::LineFramer m_framer;
  // Made when there is something to hand on: tens of thousands of
  // connections wait at once when short processes arrive faster than the
  // pipeline takes them (bench/run's short shape holds all 24,544), and an
  // empty chunk in each would cost 240 bytes of the 448 a connection took.
  ingest::IngestChunk& chunk() {
    if (!m_chunk) {
      m_chunk = std::make_unique<ingest::IngestChunk>();
    }
    return *m_chunk;
  }

  std::unique_ptr<ingest::IngestChunk> m_chunk;
};

StreamReader::StreamReader(ingest::IngestSink& sink, Options options, OnEmpty on_empty)
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

void StreamReader::add(UniqueFd socket, const ingest::Origin& origin) {
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
  ingest::Origin origin;
  origin.kind = ingest::SourceKind::stream;
  origin.channel = m_sink.next_channel_id();
  const PeerCredentials peer = peer_credentials(socket.get());
  origin.peer_pid = peer.pid;
  origin.peer_uid = peer.uid;
  const std::int64_t uid = origin.peer_uid.value_or(-1);
  m_sink.counters().channels_opened.fetch_add(1, std::memory_order_relaxed);
  if (!make_room(uid, now)) {
    // Accepted only to learn whose it is: closing it at once keeps the
    // backlog moving for everyone else. Counted, reported once a second.
    ++m_holders[uid].refused;
    m_sink.counters().channels_refused.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  m_sink.counters().channels_open.fetch_add(1, std::memory_order_relaxed);
  auto connection = std::make_unique<Connection>(std::move(socket), origin, m_options.framing);
  Connection& c = *connection;
  {
    std::lock_guard lock(m_mutex);
    m_connections.emplace(&c, std::move(connection));
  }
  Holder& holder = m_holders[uid];
  c.held_at = holder.connections.insert(holder.connections.end(), &c);
  ++m_held;
  if (m_options.silent_timeout.count() > 0) {
    m_unheard.emplace_back(now + m_options.silent_timeout, &c, origin.channel);
    forget_closed_unheard();
  }
  if (m_options.read_pacing.count() <= 0 || m_closing.load()) {
    register_connection(c, EPOLLIN | EPOLLRDHUP | EPOLLONESHOT);
    return;
  }
  // A new git process writes its first events right after connecting: let
  // them gather. Its exit (the peer closing) wakes the reader at once, so
  // a short process is usually read whole in that one wake-up.
  register_connection(c, EPOLLRDHUP | EPOLLONESHOT);
  pace(c, now, m_options.read_pacing);
}

bool StreamReader::make_room(std::int64_t uid, Clock::time_point now) {
  Holder& own = m_holders[uid];
  const std::size_t per_uid = m_options.max_connections_per_uid;
  if (per_uid > 0 && own.connections.size() >= per_uid && !reap_finished(own) &&
      !close_quietest(own, now, false, "its uid holds too many open connections")) {
    return false;
  }
  if (m_options.max_connections == 0 || m_held < m_options.max_connections || reap_finished(own)) {
    return true;
  }
  Holder* biggest = &own;
  for (auto& [holder_uid, holder] : m_holders) {
    if (holder.connections.size() > biggest->connections.size()) {
      biggest = &holder;
    }
  }
  // Out of descriptors: whoever holds the most gives one up, even a busy
  // one; when that is the newcomer's own uid, only a quiet one, else the
  // newcomer is refused.
  return close_quietest(*biggest, now, biggest != &own,
                        "trace2d is at its connection limit and its uid holds the most");
}

// A burst of short git processes is accepted faster than it is read: many
// of the connections held have hung up already, their last bytes waiting.
// Reading those first frees their places without refusing anyone. Like
// every read outside service(), it has a bound of its own: its writer is
// gone, so waiting would not spare it anything, and at a uid's bound of
// thousands of connections reading them into memory regardless took the
// queue to 15 times its bound (ingest_bench, short shape, 1.5 M events).
// The bound is four times the queue's (k_reap_share), not the queue's:
// these bytes are in the kernel already, and the standard short shape
// (500,000 events in 0.65 s from 64 writers) peaks at about twice the
// queue's bound here; dropping at the bound lost 8% of it.
bool StreamReader::reap_over_bound() const { return m_sink.over_budget_share(k_reap_share); }

bool StreamReader::reap_finished(Holder& holder) {
  constexpr int k_tries = 32;
  int tried = 0;
  for (auto it = holder.connections.begin(); it != holder.connections.end() && tried < k_tries; ++tried) {
    Connection& connection = **it;
    ++it;  // finish() takes it out of the list
    std::size_t got = 0;
    if (!connection.drain(m_sink, m_buffer, reap_over_bound(), m_options.max_read_per_wakeup, got)) {
      finish(connection);
      return true;
    }
    account_partial(connection);
  }
  return false;
}

// The quietest connection goes. Unless `even_busy`, only if it has been
// quiet for a second at least: one that is busy is a git at work.
bool StreamReader::close_quietest(Holder& holder, Clock::time_point now, bool even_busy, const char* why) {
  Connection* quietest = holder.connections.empty() ? nullptr : holder.connections.front();
  if (quietest == nullptr || (!even_busy && now - quietest->last_read < std::chrono::seconds(1))) {
    return false;
  }
  quietest->close_because(fmt::format("connection closed: {} (limit {} per uid, {} in all); this one was its "
                                      "quietest",
                                      why, m_options.max_connections_per_uid, m_options.max_connections));
  std::size_t got = 0;
  quietest->drain(m_sink, m_buffer, reap_over_bound(), m_options.max_read_per_wakeup, got);
  finish(*quietest);
  return true;
}

// Connections that closed before their silence was due leave their entry
// behind until then: one sender opening and closing fast would grow the
// list with its rate. Pruned whenever it outgrows what is open, so it stays
// within twice the open connections (amortised: each entry is dropped once).
void StreamReader::forget_closed_unheard() {
  if (m_unheard.size() <= 2 * m_held + 1024) {
    return;
  }
  std::lock_guard lock(m_mutex);
  std::erase_if(m_unheard, [&](const auto& entry) {
    const auto found = m_connections.find(std::get<1>(entry));
    return found == m_connections.end() || found->second->origin().channel != std::get<2>(entry);
  });
}

void StreamReader::close_silent(Clock::time_point now) {
  while (!m_unheard.empty() && std::get<0>(m_unheard.front()) <= now) {
    const auto [due, connection, channel] = m_unheard.front();
    m_unheard.pop_front();
    bool open = false;
    {
      std::lock_guard lock(m_mutex);
      open = m_connections.count(connection) > 0;
    }
    if (!open || connection->origin().channel != channel || connection->heard) {
      continue;
    }
    std::size_t got = 0;
    if (connection->drain(m_sink, m_buffer, reap_over_bound(), m_options.max_read_per_wakeup, got) &&
        !connection->heard) {
      connection->close_because(fmt::format("connection closed: it sent nothing in {} ms (git writes at once)",
                                            m_options.silent_timeout.count()));
    }
    finish(*connection);
  }
}

// Connections quiet for a while whose writer has exited: their sessions
// are over, though a child holding the descriptor keeps them open. The
// quietest come first in each uid's list, so only those are looked at, and
// each pid once per pass (the idle connections of one process are many).
void StreamReader::check_writers(Clock::time_point now) {
  const auto quiet = m_options.writer_exit_check;
  if (quiet.count() <= 0 || now < m_next_writer_check) {
    return;
  }
  m_next_writer_check = now + quiet;
  std::unordered_map<std::int64_t, bool> exited;
  std::vector<Connection*> over;
  for (auto& [uid, holder] : m_holders) {
    for (Connection* connection : holder.connections) {
      if (now - connection->last_read < quiet) {
        break;
      }
      const std::optional<std::int64_t> pid = connection->origin().peer_pid;
      if (connection->writer_exit_reported || !pid) {
        continue;
      }
      const auto [known, inserted] = exited.try_emplace(*pid, false);
      if (inserted) {
        known->second = process_exited(*pid);
      }
      if (known->second) {
        over.push_back(connection);
      }
    }
  }
  for (Connection* connection : over) {
    // What it wrote before it went comes first.
    std::size_t got = 0;
    if (!connection->drain(m_sink, m_buffer, reap_over_bound(), m_options.max_read_per_wakeup, got)) {
      finish(*connection);
      continue;
    }
    account_partial(*connection);
    spdlog::debug("stream connection {}: its writer, pid {}, has exited; the connection stays open (held by a "
                  "child)",
                  connection->origin().channel, connection->origin().peer_pid.value_or(0));
    connection->report_writer_exit(m_sink);
  }
}

void StreamReader::report_refusals(Clock::time_point now) {
  if (now < m_next_refusal_report) {
    return;
  }
  m_next_refusal_report = now + std::chrono::seconds(1);
  for (auto& [uid, holder] : m_holders) {
    if (holder.refused == 0) {
      continue;
    }
    ingest::IngestChunk chunk;
    ingest::Origin origin;
    origin.kind = ingest::SourceKind::stream;
    if (uid >= 0) {
      origin.peer_uid = uid;
    }
    chunk.origins.assign(1, origin);
    chunk.refused = fmt::format(
        "refused {} connection{} of uid {}: it was at its bound of open connections (limit {} per uid, {} in "
        "all) and none of them had been quiet for a second",
        holder.refused, holder.refused == 1 ? "" : "s", uid, m_options.max_connections_per_uid,
        m_options.max_connections);
    m_sink.submit(std::move(chunk));
    holder.refused = 0;
  }
  std::erase_if(m_holders, [](const auto& entry) {
    return entry.second.connections.empty() && entry.second.refused == 0 && entry.second.partial_bytes == 0;
  });
}

// Keeps its uid's connections in order of quiet, at no cost per byte.
void StreamReader::heard_from(Connection& connection) {
  if (!connection.held_at) {
    return;
  }
  auto& connections = m_holders[connection.uid()].connections;
  connections.splice(connections.end(), connections, *connection.held_at);
}

// Unfinished lines are memory a sender makes trace2d hold: charged to the
// budget (as allocated), and bounded per uid (as received) by cutting the
// line that goes over.
void StreamReader::account_partial(Connection& connection) {
  Holder& holder = m_holders[connection.uid()];
  holder.partial_line_bytes -= connection.line_counted;
  connection.line_counted = connection.partial_line_bytes();
  if (m_options.max_partial_bytes_per_uid > 0 && connection.has_partial_line() &&
      holder.partial_line_bytes + connection.line_counted > m_options.max_partial_bytes_per_uid) {
    connection.cut_partial_line(m_options.cut_keep_bytes);
    connection.line_counted = connection.partial_line_bytes();
  }
  holder.partial_line_bytes += connection.line_counted;
  const std::size_t now_held = connection.partial_bytes();
  if (now_held > connection.charged) {
    m_sink.hold(now_held - connection.charged, connection.uid());
  } else if (now_held < connection.charged) {
    m_sink.release(connection.charged - now_held, connection.uid());
  }
  holder.partial_bytes = holder.partial_bytes - connection.charged + now_held;
  connection.charged = now_held;
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

void StreamReader::pace(Connection& connection, Clock::time_point now, Clock::duration delay) {
  if (!connection.paced_at) {
    connection.paced_at = m_paced.put_off(&connection, now, delay);
  }
}

void StreamReader::finish(Connection& connection) {
  // Out of the open set before its last chunk goes: whoever sees that chunk
  // sees the connection closed.
  bool empty = false;
  {
    std::lock_guard lock(m_mutex);
    const auto found = m_connections.find(&connection);
    // Kept until the end of this round: an event of the same epoll_wait
    // may still name it (finished to make room for another, say).
    m_finished.push_back(std::move(found->second));
    m_connections.erase(found);
    empty = m_connections.empty();
  }
  m_sink.counters().channels_open.fetch_sub(1, std::memory_order_relaxed);
  connection.finish(m_sink);  // closing the descriptor takes it out of the epoll set
  if (const auto holder = m_holders.find(connection.uid()); holder != m_holders.end()) {
    if (connection.held_at) {
      holder->second.connections.erase(*connection.held_at);
      --m_held;
    }
    holder->second.partial_bytes -= std::min(holder->second.partial_bytes, connection.charged);
    holder->second.partial_line_bytes -= std::min(holder->second.partial_line_bytes, connection.line_counted);
  }
  m_sink.release(connection.charged, connection.uid());
  if (connection.paced_at) {
    m_paced.forget(*connection.paced_at);
    connection.paced_at.reset();
  }
  if (empty && m_on_empty) {
    m_on_empty(false);
  }
}

void StreamReader::service(Connection& connection, Clock::time_point now) {
  if (connection.fd() < 0) {
    return;  // finished earlier in this round
  }
  bool dropping = false;
  if (m_sink.over_share(connection.uid())) {
    // Its uid holds its share of the memory bound (the whole bound when
    // no one else holds anything): hold off, while other uids read on.
    // git's writes wait in the kernel buffer meanwhile.
    if (!connection.held_since) {
      connection.held_since = now;
    }
    if (now - *connection.held_since < m_options.overflow_wait) {
      pace(connection, now, k_over_budget_retry);
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
  account_partial(connection);
  if (got > 0) {
    heard_from(connection);
  }
  if (got > 0 && got < m_options.trickle_bytes && m_options.read_pacing.count() > 0) {
    pace(connection, now, m_options.read_pacing);
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
  // The last reads keep to the memory bound as every other read does: a
  // uid past its share waits for the pipeline while the shutdown allows
  // (k_final_wait in all), then has the rest dropped (and counted on its
  // sessions), its unfinished lines cut at its bound; and each connection
  // is read for what the kernel held, at most k_final_read, so that a
  // client still writing cannot hold the exit back (512 connections
  // writing 2 MB lines took 4 s more with 1 MiB each).
  constexpr std::size_t k_slice = 256 * 1024;
  constexpr std::size_t k_final_read = 256 * 1024;  // about a socket's default buffer
  const auto wait_until = Clock::now() + k_final_wait;
  for (Connection* connection : open) {
    std::size_t got = 0;
    bool open_still = true;
    while (open_still && got < k_final_read) {
      const std::size_t before = got;
      while (m_sink.over_share(connection->uid()) && Clock::now() < wait_until) {
        std::this_thread::sleep_for(k_over_budget_retry);
      }
      open_still = connection->drain(m_sink, m_buffer, m_sink.over_share(connection->uid()), got + k_slice, got);
      if (open_still) {
        account_partial(*connection);
      }
      if (got == before) {
        break;  // drained what the kernel held; a client still writing gets no more
      }
    }
    finish(*connection);
  }
}

void StreamReader::run() {
  std::array<epoll_event, 256> events{};
  while (true) {
    int timeout_ms = -1;
    std::optional<Clock::time_point> next = m_paced.next_due();
    if (m_listener_due && (!next || *m_listener_due < *next)) {
      next = m_listener_due;
    }
    if (!m_unheard.empty() && (!next || std::get<0>(m_unheard.front()) < *next)) {
      next = std::get<0>(m_unheard.front());
    }
    if (!m_holders.empty()) {
      timeout_ms = 1000;  // refusals are reported, and idle holders forgotten, once a second
    }
    if (next) {
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
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
      if (m_closing.load(std::memory_order_relaxed)) {
        // The last reads (close_everything) take every connection in turn:
        // a round of 256 busy ones (4 MiB each) must not hold the exit back.
        woken = true;
        break;
      }
      if (tag == &g_listener_tag) {
        const int listener = m_listener.load();
        if (listener < 0) {
          continue;
        }
        if (!accept_pending(listener, now)) {
          m_listener_due = now + k_accept_retry;
        } else if (m_options.read_pacing.count() > 0) {
          // connect() completes in the backlog and git writes meanwhile:
          // accepting a little later takes in more processes per wake-up,
          // often already finished and read whole at once.
          m_listener_due = now + m_options.read_pacing;
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
      if (m_listener_due) {
        m_listener_due.reset();
        arm_listener();
      }
      for (Connection* connection : m_paced.take_all()) {
        connection->paced_at.reset();
      }
      // Before the last connection closes: the pipeline may take no more
      // after that (on_empty).
      m_next_refusal_report = {};
      report_refusals(now);
      close_everything();
      m_finished.clear();
      if (m_on_empty) {
        m_on_empty(true);  // all handed over, even with no connection left to close
      }
      if (m_stopping.load()) {
        return;
      }
      continue;
    }
    close_silent(now);
    check_writers(now);
    report_refusals(now);
    m_finished.clear();
    // Connections whose pause is over are read now: a git process still
    // running has usually written meanwhile, and arming it for epoll first
    // would cost a system call and a wake-up more. Only one found empty, or
    // busy, is armed (service()); its hang-up stays armed throughout.
    while (Connection* connection = m_paced.take_due(now)) {
      connection->paced_at.reset();
      service(*connection, now);
    }
    if (m_listener_due && *m_listener_due <= now) {
      m_listener_due.reset();
      arm_listener();
    }
  }
}

}  // namespace trace2d::source
