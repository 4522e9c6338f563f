#pragma once
// What trace2 keeps per thread (git's tr2tls_thread_ctx): its name, its
// stack of open regions (for nesting and t_rel), its timers and counters,
// and a reusable buffer to format events in, so that emitting an event
// allocates nothing once the thread is warm.

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "client/src/metrics.hpp"

namespace trace2d::client::detail {

class Session;

struct OpenRegion {
  std::int64_t start_us = 0;
  std::string category;
  std::string label;
  // Which entry of this thread it is (tokens name it), and the nesting it
  // was entered at: a region left out of order keeps the one it was sent with.
  std::uint32_t serial = 0;
  std::size_t nesting = 0;
};

// A Region guard that ended on another thread than its region's: the
// owner applies it at its next event (see Session::settle).
struct ForeignLeave {
  std::uint32_t serial = 0;
  std::int64_t when_us = 0;  // when the guard ended: the event's time
  std::string file;
  int line = 0;
  int repo = 0;
};

// git's TR2_MAX_THREAD_NAME: "thNN:name" is cut to this many bytes.
inline constexpr std::size_t k_max_thread_name = 24;

// "main" for id 0, else "th%02d:" + base, cut like git's.
[[nodiscard]] std::string thread_name(int id, std::string_view base);

struct ThreadContext {
  ThreadContext(Session& owner, int thread_id, std::string_view base_name, std::int64_t start);

  Session* session;
  int id;
  bool named = false;  // thread_start was sent (a Thread scope made it)
  std::string name;
  std::string thread_json;  // ,"thread":"<name>" ready to copy
  std::int64_t start_us;

  // Only this thread touches its region stack: other threads' leaves wait
  // in foreign_leaves, so that its own events need no lock.
  std::vector<OpenRegion> regions;  // never shrinks: the strings keep their capacity
  std::size_t depth = 0;            // open regions
  std::uint32_t next_serial = 0;
  std::mutex foreign_mutex;                  // foreign_leaves
  std::vector<ForeignLeave> foreign_leaves;
  std::atomic<bool> has_foreign_leaves{false};

  std::array<TimerSlot, k_max_metrics> timers;
  std::array<std::atomic<std::int64_t>, k_max_metrics> counters{};

  std::string line;  // the event being formatted
  // Events room_for() refused (queue full); written by this thread only.
  std::atomic<std::uint64_t> refused{0};

  // Returns the new entry's serial (never 0).
  std::uint32_t push_region(std::int64_t now_us, std::string_view category, std::string_view label);
  // The open entry with `serial`, or depth when none is (left already).
  [[nodiscard]] std::size_t find_region(std::uint32_t serial) const;
  // Removes entry `index`; the ones above it move down one place (their
  // nesting as sent stays theirs). The strings only move: nothing allocates.
  void remove_region(std::size_t index);
  // The start of the innermost open region, or of the thread.
  [[nodiscard]] std::int64_t innermost_start() const {
    return depth == 0 ? start_us : regions[depth - 1].start_us;
  }
};

// The calling thread's context pointer. initial-exec so that the signal
// handler can read it without the dynamic TLS machinery (which may allocate).
ThreadContext*& current_context() noexcept;

// Makes sure the exit callback runs when the calling thread ends.
void arm_thread_exit_hook() noexcept;
// Called when a thread other than the main one ends with a context.
void set_thread_exit_callback(void (*callback)(ThreadContext&));

}  // namespace trace2d::client::detail
