#include "client/src/sink.hpp"

#include <linux/sockios.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

namespace trace2d::client::detail {
namespace {

// Kept free in a stream socket's send buffer for the final events.
constexpr std::size_t k_reserve = 16 * 1024;
// One send() stays below this, so the kernel takes it whole in one buffer
// (an AF_UNIX stream skb holds up to about sndbuf/2).
constexpr std::size_t k_max_send = 32 * 1024;

// Just after the line that starts at `pos`.
std::size_t line_end(std::string_view bytes, std::size_t pos) {
  const std::size_t newline = bytes.find('\n', pos);
  return newline == std::string_view::npos ? bytes.size() : newline + 1;
}

// Length of the longest run of whole lines from `pos` within `limit` bytes
// (0 when the first line alone is longer).
std::size_t whole_lines(std::string_view bytes, std::size_t pos, std::size_t limit) {
  const std::size_t end = std::min(bytes.size(), pos + limit);
  if (end == bytes.size()) {
    return end - pos;
  }
  if (end == pos) {
    return 0;  // no room at all (and rfind below would search from npos)
  }
  const std::size_t last = bytes.rfind('\n', end - 1);
  return last == std::string_view::npos || last < pos ? 0 : last + 1 - pos;
}

// A write to a closed pipe raises SIGPIPE for this thread, where it is
// blocked; take it back so that it never reaches the host.
void discard_pending_sigpipe() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  const timespec zero{0, 0};
  while (::sigtimedwait(&set, nullptr, &zero) == SIGPIPE) {
  }
}

}  // namespace

Sink::Sink(Destination destination)
    : m_kind(destination.kind),
      m_fd(destination.fd),
      m_owned(destination.owned),
      m_too_many_files(destination.too_many_files) {
  struct stat st {};
  if (m_kind == SinkKind::file && ::fstat(m_fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
    // "2".."9" or stderr may be a socket: use it as one (no SIGPIPE).
    int type = 0;
    socklen_t len = sizeof type;
    if (::getsockopt(m_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0) {
      m_kind = type == SOCK_DGRAM ? SinkKind::dgram : SinkKind::stream;
    }
  }
  m_is_socket = m_kind == SinkKind::stream || m_kind == SinkKind::dgram;
  socklen_t len = sizeof m_send_buffer;
  if (m_kind == SinkKind::stream &&
      ::getsockopt(m_fd, SOL_SOCKET, SO_SNDBUF, &m_send_buffer, &len) != 0) {
    m_send_buffer = 0;
  }
}

Sink::~Sink() {
  if (m_owned && m_fd >= 0) {
    ::close(m_fd);
  }
}

void Sink::close_in_child() noexcept {
  m_owner.store(2);
  if (m_owned && m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
}

bool Sink::acquire() noexcept {
  int idle = 0;
  return m_owner.compare_exchange_strong(idle, 1);
}

void Sink::release() noexcept {
  int mine = 1;
  m_owner.compare_exchange_strong(mine, 0);
}

std::size_t Sink::stream_budget() const {
  int queued = 0;
  if (m_send_buffer <= 0 || ::ioctl(m_fd, SIOCOUTQ, &queued) != 0) {
    return k_max_send;  // unknown: let the kernel say EAGAIN
  }
  const auto limit = static_cast<std::size_t>(m_send_buffer);
  const auto used = static_cast<std::size_t>(std::max(queued, 0));
  return used + k_reserve >= limit ? 0 : limit - k_reserve - used;
}

WriteResult Sink::write(std::string_view bytes, std::size_t& pos, bool regular,
                        std::uint64_t& dropped) {
  if (!acquire()) {
    return WriteResult::failed;  // a signal handler took the descriptor
  }
  WriteResult result = WriteResult::done;
  switch (m_kind) {
    case SinkKind::stream: result = write_stream(bytes, pos, regular); break;
    case SinkKind::dgram: result = write_dgram(bytes, pos, dropped); break;
    case SinkKind::file: result = write_plain(bytes, pos); break;
    case SinkKind::memory: result = write_memory(bytes, pos, dropped); break;
    case SinkKind::none: result = WriteResult::failed; break;
  }
  release();
  return result;
}

WriteResult Sink::write_stream(std::string_view bytes, std::size_t& pos, bool regular) {
  while (pos < bytes.size()) {
    std::size_t chunk = 0;
    if (m_mid_line.load(std::memory_order_relaxed)) {
      chunk = line_end(bytes, pos) - pos;  // finish the line first, whatever the budget
    } else if (regular) {
      const std::size_t budget = stream_budget();
      // The kernel charges about a quarter more than the payload, plus 1 KiB.
      const std::size_t room = budget > 1024 ? (budget - 1024) * 4 / 5 : 0;
      chunk = whole_lines(bytes, pos, std::min(k_max_send, room));
      if (chunk == 0) {
        // A line longer than the room goes alone, once the buffer is empty.
        int queued = 1;
        if (::ioctl(m_fd, SIOCOUTQ, &queued) != 0 || queued > 0) {
          return WriteResult::would_block;
        }
        chunk = line_end(bytes, pos) - pos;
      }
    } else {
      chunk = whole_lines(bytes, pos, k_max_send);
      chunk = chunk == 0 ? line_end(bytes, pos) - pos : chunk;
    }
    const ssize_t n = ::send(m_fd, bytes.data() + pos, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno == EAGAIN || errno == EWOULDBLOCK ? WriteResult::would_block
                                                     : WriteResult::failed;
    }
    pos += static_cast<std::size_t>(n);
    m_mid_line.store(bytes[pos - 1] != '\n', std::memory_order_relaxed);
  }
  return WriteResult::done;
}

bool Sink::wait_for_room(std::chrono::milliseconds timeout) const noexcept {
  if (m_kind != SinkKind::dgram || m_fd < 0) {
    return false;
  }
  // The kernel says POLLOUT on a connected AF_UNIX datagram socket once the
  // receiver's queue (net.unix.max_dgram_qlen, 10 by default) has room.
  pollfd pfd{m_fd, POLLOUT, 0};
  const int ready = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  return ready > 0 && (pfd.revents & POLLOUT) != 0;
}

WriteResult Sink::write_dgram(std::string_view bytes, std::size_t& pos, std::uint64_t& dropped) {
  while (pos < bytes.size()) {
    const std::size_t len = line_end(bytes, pos) - pos;
    const ssize_t n = ::send(m_fd, bytes.data() + pos, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
        return WriteResult::would_block;
      }
      if (errno != EMSGSIZE) {
        return WriteResult::failed;
      }
      ++dropped;  // git stops tracing here; one oversized event is enough to lose
    }
    pos += len;
  }
  return WriteResult::done;
}

WriteResult Sink::write_plain(std::string_view bytes, std::size_t& pos) {
  while (pos < bytes.size()) {
    const ssize_t n = ::write(m_fd, bytes.data() + pos, bytes.size() - pos);
    if (n < 0) {
      const int e = errno;
      if (e == EPIPE) {
        discard_pending_sigpipe();
      }
      if (e == EINTR) {
        continue;
      }
      return e == EAGAIN || e == EWOULDBLOCK ? WriteResult::would_block : WriteResult::failed;
    }
    pos += static_cast<std::size_t>(n);
    m_mid_line.store(bytes[pos - 1] != '\n', std::memory_order_relaxed);
  }
  return WriteResult::done;
}

// A memory target keeps at most this much between two take_memory() calls:
// a program that never takes them must not grow without bound. Lines past
// it are dropped and counted as the target's.
constexpr std::size_t k_memory_limit = std::size_t{16} << 20;

WriteResult Sink::write_memory(std::string_view bytes, std::size_t& pos, std::uint64_t& dropped) {
  std::lock_guard lock(m_memory_mutex);
  while (pos < bytes.size()) {
    const std::size_t end = bytes.find('\n', pos);
    const std::size_t next = end == std::string_view::npos ? bytes.size() : end + 1;
    if (m_memory.size() + (next - pos) <= k_memory_limit) {
      m_memory.append(bytes.substr(pos, next - pos));
    } else {
      ++dropped;
    }
    pos = next;
  }
  return WriteResult::done;
}

std::string Sink::take_memory() {
  std::lock_guard lock(m_memory_mutex);
  std::string out;
  out.swap(m_memory);
  return out;
}

bool Sink::write_from_signal_handler(std::string_view line) noexcept {
  if (m_kind == SinkKind::memory) {
    return false;  // no lock may be taken here, and the process dies anyway
  }
  // The writer thread keeps running while a handler runs on another thread:
  // wait a little for it to finish its current write, never for long.
  for (int i = 0; i < 50; ++i) {
    int idle = 0;
    if (m_owner.compare_exchange_strong(idle, 2)) {
      break;
    }
    if (idle == 2) {
      return false;
    }
    const timespec one_ms{0, 1000000};
    ::nanosleep(&one_ms, nullptr);
  }
  if (m_owner.load() != 2 || m_mid_line.load() || m_fd < 0) {
    return false;
  }
  const ssize_t n = m_is_socket
                        ? ::send(m_fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL)
                        : ::write(m_fd, line.data(), line.size());
  return n == static_cast<ssize_t>(line.size());
}

}  // namespace trace2d::client::detail
