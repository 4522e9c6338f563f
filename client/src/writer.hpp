#pragma once
// The bounded queue between the threads that emit events and the one
// background thread that writes them. Callers only append to a buffer under
// a short lock; they never wait for the collector. When the buffer is full
// the event is dropped and counted. At exit, finish() drains what the
// collector takes within a bounded time, then writes the final events
// (built with the final drop count) into the room the sink kept for them.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "client/src/sink.hpp"

namespace trace2d::client::detail {

class Writer {
 public:
  using ComposeFinal = std::function<std::string(std::uint64_t dropped)>;

  Writer(std::unique_ptr<Sink> sink, std::size_t queue_bytes);
  ~Writer();  // finishes with no final events (for tests; a session's writer lives on)
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // What a line does for its session. A child's child_start and child_exit
  // stitch the child under its parent: of the two alone, the tree shows a
  // blank child. They may fill the queue's last part (k_stitching_share),
  // which ordinary lines leave free, so a burst of data that fills the
  // queue does not cut the pair.
  enum class Line : bool { ordinary, stitching };
  static constexpr std::size_t k_stitching_share = 16;  // 1/16 of the queue

  // Queues one '\n'-terminated line. False when dropped (queue full) or closed.
  bool push(std::string_view line, Line kind = Line::ordinary) noexcept;

  // False when an ordinary line of at least `min_bytes` cannot fit now:
  // the caller drops its event before formatting it and counts it with
  // count_drop(). Lock-free and conservative: true may still end in a drop
  // at push().
  [[nodiscard]] bool has_room(std::size_t min_bytes) const noexcept {
    return m_queued.load(std::memory_order_relaxed) + min_bytes <= m_ordinary_capacity;
  }
  void count_drop() noexcept { m_dropped.fetch_add(1, std::memory_order_relaxed); }

  // Waits until every line pushed before the call is handed to the kernel,
  // at most `timeout`. True when it was; false on timeout, or when the
  // destination failed or the writer finished with lines left behind.
  bool flush(std::chrono::milliseconds timeout) noexcept;

  // Whether finish() may wait past its timeout for a collector that is
  // still taking the queue (at exit, as git waits), or keeps to it (an
  // explicit shutdown(timeout)).
  enum class Patience { timeout, while_taken };

  // Writes what it can within `timeout`, giving up early when the collector
  // has taken nothing for a while (it is stopped or gone), then the lines
  // compose_final(dropped) returns. Blocks the caller for at most `timeout`
  // plus a few milliseconds; with Patience::while_taken, for at most as long
  // as the queue needs at 1 MB/s when that is longer. push() refuses
  // everything afterwards. True when every line (the final ones too) was
  // handed over and none dropped.
  bool finish(const ComposeFinal& compose_final, std::chrono::milliseconds timeout,
              Patience patience = Patience::timeout);

  // False once the destination failed or finish() began.
  [[nodiscard]] bool accepting() const noexcept {
    return m_accepting.load(std::memory_order_relaxed);
  }
  // Everything queued has been handed to the kernel (for the signal handler).
  [[nodiscard]] bool drained() const noexcept { return m_drained.load(); }
  [[nodiscard]] std::uint64_t dropped() const noexcept {
    return m_dropped.load(std::memory_order_relaxed);
  }
  // The part of dropped() the destination lost (failed, datagram too big).
  [[nodiscard]] std::uint64_t dropped_target() const noexcept {
    return m_dropped_target.load(std::memory_order_relaxed);
  }
  [[nodiscard]] Sink& sink() { return *m_sink; }

  // Around fork(): the writer is kept at a known point (waiting, or in a
  // write) while the process forks; the parent then releases it.
  void hold_for_fork() noexcept;
  void release_after_fork() noexcept;
  // In the child of a fork: the thread does not exist there; never touch
  // the queue (or its mutex) again, and close the descriptor if it was ours.
  void abandon_in_child() noexcept;

 private:
  void run();
  bool should_give_up(std::int64_t now_us) const;
  bool write_final(const std::string& lines);

  std::unique_ptr<Sink> m_sink;
  const std::size_t m_capacity;
  const std::size_t m_ordinary_capacity;  // what ordinary lines may fill

  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::string m_front;      // filled by push(), under m_mutex
  bool m_running = false;   // the thread has started
  bool m_sleeping = false;  // the writer waits for a notification
  bool m_hurried = false;   // woken early for a filling queue (once per batch)
  bool m_finishing = false;
  bool m_done = false;
  bool m_final_written = false;  // finish(): the final lines all went out
  int m_flush_waiters = 0;
  // Bytes ever pushed, and ever handed to the kernel (or skipped): a flush
  // waits for the second to reach what the first was when it began.
  std::uint64_t m_pushed_total = 0;
  std::uint64_t m_written_total = 0;
  ComposeFinal m_compose;
  Patience m_patience = Patience::timeout;
  std::int64_t m_timeout_us = 0;
  std::int64_t m_finish_start_us = 0;
  std::int64_t m_deadline_us = 0;

  // Only the writer thread touches these.
  std::string m_back;
  std::size_t m_back_pos = 0;
  std::int64_t m_stalled_since_us = 0;
  bool m_taken_while_finishing = false;  // the collector took lines since finish() began

  // Read without the lock by has_room() and dropped(); written under it.
  std::atomic<std::size_t> m_queued{0};  // m_front.size()
  std::atomic<std::uint64_t> m_dropped{0};
  std::atomic<std::uint64_t> m_dropped_target{0};
  std::atomic<bool> m_accepting{true};
  std::atomic<bool> m_drained{true};
  std::thread m_thread;
};

}  // namespace trace2d::client::detail
