#pragma once
// A multi-producer, single-consumer hand-off between threads. Pushing never
// blocks (the memory bound is enforced by the producers, see MemoryBudget);
// the consumer takes everything queued at once.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace trace2d::pipeline {

template <typename T>
class WorkQueue {
 public:
  void push(T item) {
    {
      std::lock_guard lock(m_mutex);
      m_items.push_back(std::move(item));
    }
    m_ready.notify_one();
  }

  // Moves every queued item into `out` (appending). Waits up to `timeout`
  // when the queue is empty. Returns false once the queue is closed and
  // drained: the consumer is done.
  bool pop_all(std::vector<T>& out, std::chrono::milliseconds timeout) {
    std::unique_lock lock(m_mutex);
    if (m_items.empty() && !m_closed) {
      m_ready.wait_for(lock, timeout, [&] { return !m_items.empty() || m_closed; });
    }
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
  bool m_closed = false;
};

}  // namespace trace2d::pipeline
