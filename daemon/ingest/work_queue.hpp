#pragma once
// A multi-producer, single-consumer hand-off between threads. Pushing never
// blocks (the memory bound is enforced by the producers, see MemoryBudget);
// the consumer takes everything queued at once.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace trace2d::ingest {

template <typename T>
class WorkQueue {
 public:
  // An `urgent` item wakes even a consumer waiting for many.
  void push(T item, bool urgent = false) {
    bool wake = false;
    {
      std::lock_guard lock(m_mutex);
      m_items.push_back(std::move(item));
      m_urgent = m_urgent || urgent;
      wake = m_urgent || m_items.size() >= m_wake_at;
    }
    if (wake) {
      m_ready.notify_one();
    }
  }

  // Moves every queued item into `out` (appending). Waits up to `timeout`
  // until at least `wake_at` items are queued (or the queue closes), then
  // takes whatever is there. Returns false once the queue is closed and
  // drained: the consumer is done.
  //
  // A consumer that knows more items are coming soon waits with a larger
  // `wake_at`: under a steady trickle it then wakes once per `timeout`
  // instead of once per item, and every wake-up is CPU taken from git on
  // the same machine.
  bool pop_all(std::vector<T>& out, std::chrono::milliseconds timeout, std::size_t wake_at = 1) {
    std::unique_lock lock(m_mutex);
    wake_at = std::max<std::size_t>(wake_at, 1);
    if (m_items.size() < wake_at && !m_closed) {
      m_wake_at = wake_at;
      m_ready.wait_for(lock, timeout, [&] { return m_items.size() >= wake_at || m_urgent || m_closed; });
      m_wake_at = 1;
    }
    m_urgent = false;
    if (m_items.empty()) {
      return !m_closed;
    }
    if (out.empty()) {
      out.swap(m_items);
    } else {
      for (auto& item : m_items) {
        out.push_back(std::move(item));
      }
      m_items.clear();
    }
    return true;
  }

  // No more pushes will come; the consumer drains what is left.
  void close() {
    {
      std::lock_guard lock(m_mutex);
      m_closed = true;
    }
    m_ready.notify_all();
  }

  [[nodiscard]] bool empty() const {
    std::lock_guard lock(m_mutex);
    return m_items.empty();
  }
  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(m_mutex);
    return m_items.size();
  }

 private:
  mutable std::mutex m_mutex;
  std::condition_variable m_ready;
  std::vector<T> m_items;
  std::size_t m_wake_at = 1;  // the waiting consumer's threshold
  bool m_urgent = false;      // an urgent item waits
  bool m_closed = false;
};

}  // namespace trace2d::ingest
