#pragma once
// Bytes held between the sockets and SQLite (read but not yet committed).
// Readers check it before reading more; see docs/architecture.md for what
// happens at the bound.
//
// The bound is shared out per uid (the sender, from the kernel): a uid may
// hold the whole bound while it is the only one holding anything, and an
// equal share of it once others hold some too. So a flood fills only its
// own share, and everyone else reads on (docs/security.md, "Fairness").
// Charges without a uid (the store's batches) count in the total only.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

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
  // The same, counted in `uid`'s share too.
  void charge(std::size_t bytes, std::int64_t uid) {
    if (bytes == 0) {
      return;
    }
    {
      const std::lock_guard lock(m_mutex);
      m_by_uid[uid] += bytes;
    }
    charge(bytes);
  }
  void release(std::size_t bytes, std::int64_t uid) {
    if (bytes == 0) {
      return;
    }
    {
      const std::lock_guard lock(m_mutex);
      if (const auto held = m_by_uid.find(uid); held != m_by_uid.end()) {
        held->second -= std::min(held->second, bytes);
        if (held->second == 0) {
          m_by_uid.erase(held);
        }
      }
    }
    release(bytes);
  }

  // Whether `uid` holds its share: the whole bound while no other uid
  // holds anything, else the bound divided among the uids holding some
  // (itself included). Work-conserving: nobody is held back while the
  // bound has room that no one else wants. What has no uid (the store's
  // batches beyond their events' bytes) counts in the total only: it
  // follows what the uids hold, so the total stays within a small multiple
  // of the bound without a check of its own, which would let one uid's
  // overshoot hold back everyone else.
  [[nodiscard]] bool over_share(std::int64_t uid) const {
    const std::lock_guard lock(m_mutex);
    const auto held = m_by_uid.find(uid);
    const std::size_t own = held == m_by_uid.end() ? 0 : held->second;
    const std::size_t holders = m_by_uid.size() + (held == m_by_uid.end() ? 1 : 0);
    return own >= m_limit / holders;
  }
  // One uid holds the whole bound, and no other uid holds anything: the
  // pipeline is full of that uid alone, and a reader that shares its input
  // with everyone (the datagram socket) may pause for it without holding
  // back anyone else's bytes already read.
  [[nodiscard]] bool one_uid_holds_it_all() const {
    const std::lock_guard lock(m_mutex);
    return m_by_uid.size() == 1 && m_by_uid.begin()->second >= m_limit;
  }
  [[nodiscard]] std::size_t held(std::int64_t uid) const {
    const std::lock_guard lock(m_mutex);
    const auto held = m_by_uid.find(uid);
    return held == m_by_uid.end() ? 0 : held->second;
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
  mutable std::mutex m_mutex;
  std::unordered_map<std::int64_t, std::size_t> m_by_uid;  // uids holding bytes now
};

}  // namespace trace2d::ingest
