#pragma once
// Bytes held between the sockets and SQLite (read but not yet committed).
// Readers check it before reading more; see docs/architecture.md for what
// happens at the bound.

#include <atomic>
#include <cstddef>

namespace trace2d::ingest {

class MemoryBudget {
 public:
  explicit MemoryBudget(std::size_t limit_bytes) : m_limit(limit_bytes) {}

  void charge(std::size_t bytes) {
    const std::size_t now = m_used.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    std::size_t peak = m_peak.load(std::memory_order_relaxed);
    while (now > peak && !m_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void release(std::size_t bytes) {
    m_used.fetch_sub(bytes);
    if (m_waiters.load() > 0) {
      m_used.notify_all();
    }
  }

  // Blocks until what is held is under the bound: for a source that can
  // wait without harm (an import), where a socket's reader drops instead.
  void wait_for_room() {
    m_waiters.fetch_add(1);
    for (std::size_t now = m_used.load(); now >= m_limit; now = m_used.load()) {
      m_used.wait(now);  // returns at once when a release came in between
    }
    m_waiters.fetch_sub(1);
  }

  [[nodiscard]] bool exhausted() const { return used() >= m_limit; }
  [[nodiscard]] std::size_t used() const { return m_used.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t peak() const { return m_peak.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t limit() const { return m_limit; }

 private:
  std::size_t m_limit;
  std::atomic<std::size_t> m_used{0};
  std::atomic<std::size_t> m_peak{0};
  std::atomic<int> m_waiters{0};
};

}  // namespace trace2d::ingest
