#pragma once
// Writes queued event lines to the destination without ever blocking on a
// stalled collector (sockets are written with MSG_DONTWAIT|MSG_NOSIGNAL),
// and keeps room in a stream socket's send buffer for the final events, so
// that the exit events and the drop count still get into the kernel when
// the collector is stopped: they are read once it resumes.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "client/src/destination.hpp"

namespace trace2d::client::detail {

enum class WriteResult { done, would_block, failed };

class Sink {
 public:
  explicit Sink(Destination destination);
  ~Sink();
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  // Writes the '\n'-terminated lines of `bytes` from `pos` on, advancing
  // `pos`. `regular` lines leave the reserve free; the final ones may use
  // it. Lines a datagram cannot carry are skipped and added to `dropped`.
  WriteResult write(std::string_view bytes, std::size_t& pos, bool regular, std::uint64_t& dropped);

  // For the fatal-signal handler (async-signal-safe): one attempt to write
  // `line` whole, only when no writer is in the middle of a line. After it
  // the sink accepts nothing more.
  bool write_from_signal_handler(std::string_view line) noexcept;

  // A datagram target whose collector's queue was full: waits until it has
  // room, at most `timeout`; true when it said so (other kinds: false at
  // once, nothing to wait on).
  bool wait_for_room(std::chrono::milliseconds timeout) const noexcept;

  // A memory target's lines since the last call (empty for other targets).
  [[nodiscard]] std::string take_memory();

  // Closes a descriptor opened for this process only; for a forked child.
  void close_in_child() noexcept;

  [[nodiscard]] SinkKind kind() const { return m_kind; }
  [[nodiscard]] bool too_many_files() const { return m_too_many_files; }

 private:
  WriteResult write_stream(std::string_view bytes, std::size_t& pos, bool regular);
  WriteResult write_dgram(std::string_view bytes, std::size_t& pos, std::uint64_t& dropped);
  WriteResult write_plain(std::string_view bytes, std::size_t& pos);
  WriteResult write_memory(std::string_view bytes, std::size_t& pos, std::uint64_t& dropped);
  std::size_t stream_budget() const;
  bool acquire() noexcept;
  void release() noexcept;

  SinkKind m_kind;
  int m_fd;
  bool m_owned;
  bool m_too_many_files;
  bool m_is_socket = false;
  int m_send_buffer = 0;
  // 0 idle, 1 the writer thread is writing, 2 taken by a signal handler.
  std::atomic<int> m_owner{0};
  // Set while a line is only partly written: nobody else may write then.
  std::atomic<bool> m_mid_line{false};
  std::mutex m_memory_mutex;  // m_memory
  std::string m_memory;
};

}  // namespace trace2d::client::detail
