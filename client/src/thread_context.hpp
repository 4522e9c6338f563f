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
  // Which entry of this thread it is (tokens name it), and the nesting it
  // was entered at: a region left out of order keeps the one it was sent with.
  std::uint32_t serial = 0;
  std::size_t nesting = 0;

  // Kept for the region_leave, also when the region_enter was dropped: a
  // leave sent later still names its region. Set on every enter, dropped
  // or not, so copied as cheaply as possible: category then label in
  // `m_short` (two plain copies) when they fit, as nearly all do; std::string's
  // assign cost twice that on the drop path (client_bench, callgrind).
  void set_names(std::string_view category, std::string_view label) {
    m_category_size = category.size();
    m_label_size = label.size();
    if (category.size() + label.size() <= m_short.size()) {
      // char_traits::copy, not memcpy: an absent name has no data pointer
      // (memcpy from null is undefined, even for 0 bytes; UBSan says so).
      std::char_traits<char>::copy(m_short.data(), category.data(), category.size());
      std::char_traits<char>::copy(m_short.data() + category.size(), label.data(), label.size());
      m_long = false;
    } else {
      m_long_names.assign(category).append(label);
      m_long = true;
    }
  }
  [[nodiscard]] std::string_view category() const {
    return {m_long ? m_long_names.data() : m_short.data(), m_category_size};
  }
  [[nodiscard]] std::string_view label() const {
    return {(m_long ? m_long_names.data() : m_short.data()) + m_category_size, m_label_size};
  }

 private:
  std::size_t m_category_size = 0;
  std::size_t m_label_size = 0;
  bool m_long = false;
  std::array<char, 64> m_short{};
  std::string m_long_names;  // keeps its capacity for the next long names
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
  std::vector<OpenRegion> regions;  // never shrinks: entries are reused
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

  // Returns the new entry's serial (never 0). Inline, as find_region and
  // remove_region's usual case: every region, sent or dropped, runs them.
  std::uint32_t push_region(std::int64_t now_us, std::string_view category,
                            std::string_view label) {
    if (depth == regions.size()) {
      regions.emplace_back();
    }
    OpenRegion& r = regions[depth++];
    r.start_us = now_us;
    r.set_names(category, label);
    r.nesting = depth;
    if (++next_serial == 0) {
      next_serial = 1;  // 0 means "no region" in a token
    }
    r.serial = next_serial;
    return r.serial;
  }
  // The open entry with `serial`, or depth when none is (left already).
  [[nodiscard]] std::size_t find_region(std::uint32_t serial) const {
    for (std::size_t i = depth; i > 0; --i) {
      if (regions[i - 1].serial == serial) {
        return i - 1;
      }
    }
    return depth;
  }
  // Removes entry `index`; the ones above it move down one place (their
  // nesting as sent stays theirs). Nothing allocates.
  void remove_region(std::size_t index) {
    if (index + 1 == depth) {
      --depth;  // the innermost, as nearly always: nothing to move
    } else {
      remove_inner_region(index);
    }
  }
  void remove_inner_region(std::size_t index);
  // The start of the innermost open region, or of the thread.
  [[nodiscard]] std::int64_t innermost_start() const {
    return depth == 0 ? start_us : regions[depth - 1].start_us;
  }
};

// The calling thread's context pointer. initial-exec so that the signal
// handler can read it without the dynamic TLS machinery (which may
// allocate); in the header, so that every event reads it inline.
[[gnu::tls_model("initial-exec")]] extern constinit thread_local ThreadContext* t_context;
inline ThreadContext*& current_context() noexcept { return t_context; }

// Makes sure the exit callback runs when the calling thread ends.
void arm_thread_exit_hook() noexcept;
// Called when a thread other than the main one ends with a context.
void set_thread_exit_callback(void (*callback)(ThreadContext&));

}  // namespace trace2d::client::detail
