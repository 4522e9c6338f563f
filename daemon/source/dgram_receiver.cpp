#include "daemon/source/dgram_receiver.hpp"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <array>
#include <memory>
#include <cstdio>
#include <cerrno>
#include <cstring>

#include "proto/parser.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::source {
namespace {

// git cannot send a datagram larger than its socket send buffer (about 208
// KiB by default, at most wmem_max): 256 KiB per message holds any of them.
constexpr std::size_t k_message_bytes = 256 * 1024;
constexpr unsigned k_messages_per_call = 16;
constexpr std::size_t k_control_bytes = CMSG_SPACE(sizeof(ucred)) + CMSG_SPACE(sizeof(std::uint32_t));

// The kernel reports (and accounts) twice the size asked for.
int current_receive_buffer(int fd) {
  int value = 0;
  socklen_t len = sizeof value;
  return ::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &len) == 0 ? value : 0;
}

long rmem_max() {
  std::FILE* f = std::fopen("/proc/sys/net/core/rmem_max", "r");
  long value = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%ld", &value) != 1) {
      value = 0;
    }
    std::fclose(f);
  }
  return value;
}

// Only ever raises the buffer: systemd (ReceiveBuffer=) may have set a larger
// one than an unprivileged process could. SO_RCVBUFFORCE goes past
// net.core.rmem_max when permitted (root, CAP_NET_ADMIN); plain SO_RCVBUF is
// capped at rmem_max, so it is used only when that still means more.
void raise_receive_buffer(int fd, std::size_t wanted_bytes) {
  const int wanted = static_cast<int>(std::min<std::size_t>(wanted_bytes, 1u << 30));
  const int current = current_receive_buffer(fd);
  if (current >= 2 * static_cast<long>(wanted)) {
    return;
  }
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &wanted, sizeof wanted) == 0) {
    return;
  }
  const int capped = static_cast<int>(std::min<long>(wanted, rmem_max()));
  if (2 * static_cast<long>(capped) > current) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &capped, sizeof capped);
  }
  // Whether it fell short is logged once, with the size, by the caller
  // (Sources::start): two lines with two different numbers read as a
  // contradiction.
}

}  // namespace

// recvmmsg's buffers, allocated once.
struct DgramReceiver::Batch {
  // Left uninitialised: zeroing would make all 4 MiB resident from the
  // start, where the kernel only ever writes the pages a datagram fills.
  std::unique_ptr<char[]> data = std::make_unique_for_overwrite<char[]>(k_message_bytes * k_messages_per_call);
  std::array<iovec, k_messages_per_call> iov{};
  std::array<mmsghdr, k_messages_per_call> headers{};
  std::array<std::array<char, k_control_bytes>, k_messages_per_call> control{};

  void reset() {
    for (unsigned i = 0; i < k_messages_per_call; ++i) {
      iov[i] = {data.get() + i * k_message_bytes, k_message_bytes};
      headers[i] = {};
      headers[i].msg_hdr.msg_iov = &iov[i];
      headers[i].msg_hdr.msg_iovlen = 1;
      headers[i].msg_hdr.msg_control = control[i].data();
      headers[i].msg_hdr.msg_controllen = control[i].size();
    }
  }
};

DgramReceiver::DgramReceiver(asio::local::datagram_protocol::socket socket,
                             ingest::IngestSink& sink, Options options)
    : m_socket(std::move(socket)),
      m_timer(m_socket.get_executor()),
      m_sink(sink),
      m_options(options),
      m_channel(sink.next_channel_id()),
      m_batch(std::make_unique<Batch>()) {
  const int fd = m_socket.native_handle();
  const int one = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0) {
    spdlog::warn("dgram: SO_PASSCRED: {}; senders will be unknown", std::strerror(errno));
  }
  if (::setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one) != 0) {
    spdlog::debug("dgram: SO_RXQ_OVFL: {}", std::strerror(errno));
  }
  raise_receive_buffer(fd, options.receive_buffer);
  int actual = 0;
  socklen_t len = sizeof actual;
  if (::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &actual, &len) == 0) {
    // The kernel reports twice what was set (the rest is its bookkeeping):
    // half is the figure to compare with the setting.
    m_receive_buffer = static_cast<std::size_t>(actual) / 2;
  }
  boost::system::error_code ec;
  m_socket.non_blocking(true, ec);
}

DgramReceiver::~DgramReceiver() = default;

void DgramReceiver::start() {
  asio::co_spawn(m_socket.get_executor(), run(), asio::detached);
}

void DgramReceiver::stop() {
  asio::post(m_socket.get_executor(), [this] {
    m_stopping = true;
    boost::system::error_code ignored;
    m_socket.cancel(ignored);
    m_timer.cancel();
  });
}

namespace {
// How long another uid's datagram keeps the socket from pausing for a lone
// burst: git runs come in bursts of commands, so a user whose last one
// came seconds ago is likely to send again while the pause would last.
constexpr auto k_shared_window = std::chrono::seconds(10);
}  // namespace

// Every sender shares the one kernel queue, and a pause for one sender's
// flood would make everyone's git wait at max_dgram_qlen: the receiver
// reads on, and drops (counting them on their sessions) the datagrams of a
// uid that holds its share of the memory bound. It pauses only for a lone
// burst: one uid holds the whole bound, no other uid holds anything and no
// other uid has sent a datagram for k_shared_window (a single user's
// burst: as a stream connection does, it waits up to
// limits.overflow_wait_ms rather than lose lines). A datagram of anyone
// else read after it ends the pause while its bytes are held. A burst
// that outlasts the wait is dropped until what is held falls to half the
// bound.
bool DgramReceiver::lone_burst(std::chrono::steady_clock::time_point now) const {
  const bool shared = m_last_senders[1].uid != -1 && now - m_last_senders[1].at < k_shared_window;
  return !shared && m_sink.one_uid_holds_it_all();
}

void DgramReceiver::saw_sender(std::int64_t uid, std::chrono::steady_clock::time_point now) {
  if (m_last_senders[0].uid != uid) {
    m_last_senders[1] = m_last_senders[0];  // the other uid, last seen then
  }
  m_last_senders[0] = Sender{uid, now};
}

asio::awaitable<void> DgramReceiver::run() {
  m_sink.counters().channels_opened.fetch_add(1, std::memory_order_relaxed);
  while (true) {
    if (!m_stopping && !m_waited_out && lone_burst(std::chrono::steady_clock::now())) {
      const auto deadline = std::chrono::steady_clock::now() + m_options.overflow_wait;
      while (!m_stopping && m_sink.one_uid_holds_it_all() && std::chrono::steady_clock::now() < deadline) {
        m_timer.expires_after(std::chrono::milliseconds(2));
        boost::system::error_code ec;
        co_await m_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      m_waited_out = m_sink.one_uid_holds_it_all();
    }
    if (!m_stopping) {
      boost::system::error_code ec;
      co_await m_socket.async_wait(asio::local::datagram_protocol::socket::wait_read,
                                   asio::redirect_error(asio::use_awaitable, ec));
      if (ec && ec != asio::error::operation_aborted) {
        spdlog::error("dgram: wait failed: {}", ec.message());
        break;
      }
    }
    if (!drain() || m_stopping) {
      break;
    }
  }
  boost::system::error_code ignored;
  m_socket.close(ignored);
}

bool DgramReceiver::drain() {
  const int fd = m_socket.native_handle();
  // One chunk per sender uid: the pipeline gives each uid's chunks their
  // own turn, so another user's datagrams are parsed and stored after at
  // most a turn of a flood's, not behind all it has queued. A session's
  // datagrams come from one process, so they keep their order.
  struct SenderChunk {
    std::int64_t uid = -1;
    ingest::IngestChunk chunk;
  };
  std::vector<SenderChunk> chunks;
  std::uint64_t received = 0;
  const auto submit = [&](ingest::IngestChunk& chunk) {
    if (chunk.lines.empty() && chunk.dropped_lines == 0) {
      return;
    }
    m_sink.submit(std::move(chunk));
    chunk = ingest::IngestChunk();
  };
  const auto submit_all = [&] {
    for (SenderChunk& sender : chunks) {
      submit(sender.chunk);
    }
  };
  const auto chunk_of = [&](std::int64_t uid) -> ingest::IngestChunk& {
    for (SenderChunk& sender : chunks) {
      if (sender.uid == uid) {
        return sender.chunk;
      }
    }
    return chunks.emplace_back(SenderChunk{uid, {}}).chunk;
  };
  // Whether a uid's datagrams are dropped: asked once per uid and batch of
  // messages (not per datagram). A lone uid over the whole bound is not
  // dropped before run() has waited for it: what this batch holds of it is
  // kept (an overshoot of one batch at most), and the read ends after it.
  std::vector<std::pair<std::int64_t, bool>> over_share;
  bool pause = false;
  auto now = std::chrono::steady_clock::now();
  const auto dropping_for = [&](const ingest::Origin& origin) {
    const std::int64_t uid = origin.peer_uid.value_or(-1);
    for (const auto& [known, over] : over_share) {
      if (known == uid) {
        return over;
      }
    }
    saw_sender(uid, now);
    bool over = m_sink.over_share(uid);
    if (over && !m_waited_out && !m_stopping && lone_burst(now)) {
      over = false;
      pause = true;
    }
    return over_share.emplace_back(uid, over).second;
  };
  // A stopping receiver empties the queue (at most what a full receive
  // buffer holds of small datagrams: a sender still flooding cannot keep it
  // reading); a running one yields now and then.
  while (received < (m_stopping ? 65536u : 4096u)) {
    // The bound can fill during this read (at each submit): a lone uid's
    // burst then pauses here too, rather than have its next datagrams
    // dropped before run() would have waited for it.
    now = std::chrono::steady_clock::now();
    if (!m_stopping && m_sink.one_uid_holds_it_all()) {
      if (!m_waited_out && lone_burst(now)) {
        break;
      }
    } else if (!m_sink.over_budget_share(0.5)) {
      // The burst that was waited out has drained to half the bound: the
      // next one is waited for again. Not sooner: another uid's datagram
      // held for a moment, or the flood dipping under the bound as the
      // parser frees it, would each start a new pause, and a flood that
      // keeps the bound full would pause the socket for everyone again
      // and again (other users' datagrams queued behind its, 2 s a time).
      m_waited_out = false;
    }
    m_batch->reset();
    over_share.clear();
    const int n = ::recvmmsg(fd, m_batch->headers.data(), k_messages_per_call, MSG_DONTWAIT, nullptr);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      }
      if (errno == EINTR) {
        continue;
      }
      spdlog::error("dgram: recvmmsg: {}", std::strerror(errno));
      submit_all();
      return false;
    }
    for (int i = 0; i < n; ++i) {
      const mmsghdr& message = m_batch->headers[static_cast<std::size_t>(i)];
      ingest::Origin origin{ingest::SourceKind::dgram, m_channel, {}, {}};
      for (cmsghdr* c = CMSG_FIRSTHDR(&message.msg_hdr); c != nullptr;
           c = CMSG_NXTHDR(const_cast<msghdr*>(&message.msg_hdr), c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
          ucred cred{};
          std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
          origin.peer_pid = cred.pid;
          origin.peer_uid = cred.uid;
        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
          std::uint32_t counter = 0;
          std::memcpy(&counter, CMSG_DATA(c), sizeof counter);
          if (counter != m_last_drop_counter) {
            m_kernel_drops.fetch_add(counter - m_last_drop_counter);
            m_last_drop_counter = counter;
          }
        }
      }
      ingest::IngestChunk& chunk = chunk_of(origin.peer_uid.value_or(-1));
      // Consecutive datagrams from one sender share an origin entry.
      if (chunk.origins.empty() || chunk.origins.back().peer_pid != origin.peer_pid ||
          chunk.origins.back().peer_uid != origin.peer_uid) {
        chunk.origins.push_back(origin);
      }
      const auto origin_index = static_cast<std::uint32_t>(chunk.origins.size() - 1);
      std::string_view payload(static_cast<const char*>(message.msg_hdr.msg_iov->iov_base), message.msg_len);
      m_sink.counters().bytes.fetch_add(payload.size(), std::memory_order_relaxed);
      m_datagrams.fetch_add(1, std::memory_order_relaxed);
      ++received;
      if ((message.msg_hdr.msg_flags & MSG_TRUNC) != 0) {
        // Longer than any datagram git can send: keep what arrived, as a reject.
        chunk.add_line(payload.substr(0, 64 * 1024), std::max<std::uint64_t>(m_options.max_line_bytes + 1, payload.size()),
                       origin_index);
        continue;
      }
      // One line per datagram, or several separated by '\n'.
      const bool dropping = dropping_for(origin);
      while (!payload.empty()) {
        const std::size_t newline = payload.find('\n');
        const std::string_view line = payload.substr(0, newline);
        if (dropping) {
          chunk.drop_line(line, line.size(), origin_index);
        } else {
          chunk.add_line(line, line.size(), origin_index);
        }
        if (newline == std::string_view::npos) {
          break;
        }
        payload.remove_prefix(newline + 1);
      }
    }
    for (SenderChunk& sender : chunks) {
      if (sender.chunk.bytes.size() >= 1024 * 1024 || pause) {
        submit(sender.chunk);
      }
    }
    if (pause) {
      break;
    }
  }
  submit_all();
  return true;
}

}  // namespace trace2d::source
