#pragma once
// The AF_UNIX datagram socket (`af_unix:dgram:` and the fallback of a bare
// `af_unix:`): one event line per datagram, several '\n'-separated lines
// accepted too. git blocks on a full datagram queue, and the queue is short,
// so the socket is read continuously with recvmmsg into a large SO_RCVBUF.
// Each datagram's sender comes from SCM_CREDENTIALS; kernel drops, if any,
// from SO_RXQ_OVFL.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "daemon/ingest/ingest_sink.hpp"
#include "daemon/ingest/line_framer.hpp"
#include "daemon/settings/setting.hpp"
#include "daemon/source/asio.hpp"

namespace trace2d::source {

class DgramReceiver {
 public:
  struct Options {
    std::size_t receive_buffer = 8 * 1024 * 1024;
    std::size_t max_line_bytes = ingest::k_default_max_line_bytes;  // limits.max_line_bytes, shared
    std::chrono::milliseconds overflow_wait{2000};                  // limits.overflow_wait_ms, shared

    // The settings that fill these (docs/configuration.md); `Self` is
    // Options or const Options.
    template <typename Self, typename Visitor>
    static void visit_settings(Self& o, Visitor& v) {
      using settings::Key;
      using settings::Range;
      v.integer(Key{"dgram", "receive_buffer_bytes", "--dgram-receive-buffer-bytes", "BYTES",
                    "Kernel receive buffer of the datagram socket"},
                o.receive_buffer, Range{4096, 1LL << 30});
    }
  };

  DgramReceiver(asio::local::datagram_protocol::socket socket, ingest::IngestSink& sink,
                Options options);
  ~DgramReceiver();
  DgramReceiver(const DgramReceiver&) = delete;
  DgramReceiver& operator=(const DgramReceiver&) = delete;

  void start();
  // Reads what the socket still holds, then stops. Thread-safe.
  void stop();

  [[nodiscard]] std::uint64_t kernel_drops() const { return m_kernel_drops.load(); }
  [[nodiscard]] std::uint64_t datagrams() const { return m_datagrams.load(); }
  // The receive buffer in effect, in the setting's terms (half of what
  // SO_RCVBUF reports), and what the setting asked for.
  [[nodiscard]] std::size_t receive_buffer() const { return m_receive_buffer; }
  [[nodiscard]] std::size_t wanted_receive_buffer() const { return m_options.receive_buffer; }

 private:
  struct Batch;
  asio::awaitable<void> run();
  // Receives until the socket would block, or a lone uid fills the memory
  // bound (run() pauses then); returns false on a socket error.
  bool drain();
  // Whether one uid holds the whole bound and no other uid has sent a
  // datagram for k_shared_window: a burst worth pausing the socket for.
  [[nodiscard]] bool lone_burst(std::chrono::steady_clock::time_point now) const;
  void saw_sender(std::int64_t uid, std::chrono::steady_clock::time_point now);

  asio::local::datagram_protocol::socket m_socket;
  asio::steady_timer m_timer;
  ingest::IngestSink& m_sink;
  Options m_options;
  std::uint64_t m_channel;
  std::unique_ptr<Batch> m_batch;
  std::size_t m_receive_buffer = 0;
  std::uint32_t m_last_drop_counter = 0;
  bool m_stopping = false;
  // A lone uid has held the whole bound for limits.overflow_wait_ms: its
  // datagrams are dropped (not paused for) until what is held falls to half
  // the bound (drain()).
  bool m_waited_out = false;
  // The two uids whose datagrams were read last, with when: a pause holds
  // every sender's datagrams in the one kernel queue, so it is taken only
  // while nobody else has used the socket for a while (lone_burst()).
  struct Sender {
    std::int64_t uid = -1;
    std::chrono::steady_clock::time_point at;
  };
  std::array<Sender, 2> m_last_senders{};
  std::atomic<std::uint64_t> m_kernel_drops{0};
  std::atomic<std::uint64_t> m_datagrams{0};
};

}  // namespace trace2d::source
