#include "client/src/writer.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>

#include "client/src/clock.hpp"

namespace trace2d::client::detail {
namespace {

// After the queue empties, the writer keeps polling this long before it
// asks to be woken: a steady stream of events then costs no wake-up calls.
constexpr auto k_linger = std::chrono::milliseconds(2);
// While the collector takes nothing, retry this often.
constexpr auto k_retry = std::chrono::milliseconds(5);
// At exit, a collector that has taken nothing for this long is given up on
// at once: it is stopped or gone, and waiting longer would only delay exit.
constexpr std::int64_t k_stall_give_up_us = 20000;

std::uint64_t count_lines(std::string_view bytes) {
  return static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\n'));
}

}  // namespace

Writer::Writer(std::unique_ptr<Sink> sink, std::size_t queue_bytes)
    : m_sink(std::move(sink)), m_capacity(queue_bytes) {
  // The thread must not run the host's signal handlers, and SIGPIPE from a
  // closed pipe must stay with it (see Sink): it starts with all blocked.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    m_thread = std::thread([this] {
      pthread_setname_np(pthread_self(), "trace2d-writer");
      run();
    });
  } catch (...) {
    m_accepting = false;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  // Return only once the thread runs: a fork() right after start() must not
  // catch it half-way through its start-up (holding allocator locks).
  std::unique_lock lock(m_mutex);
  m_cv.wait(lock, [this] { return m_running || !m_thread.joinable(); });
}

Writer::~Writer() {
  finish([](std::uint64_t) { return std::string(); }, std::chrono::seconds(1));
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

bool Writer::push(std::string_view line) noexcept {
  bool wake = false;
  {
    std::lock_guard lock(m_mutex);
    if (m_finishing || !m_accepting.load(std::memory_order_relaxed)) {
      return false;
    }
    if (m_front.size() + line.size() > m_capacity) {
      ++m_dropped;
      return false;
    }
    try {
      m_front.append(line);
    } catch (...) {
      ++m_dropped;
      return false;
    }
    m_drained.store(false, std::memory_order_relaxed);
    // A burst filling the queue ends the writer's lingering early.
    const bool filling = !m_hurried && m_front.size() > m_capacity / 4;
    wake = m_sleeping || filling;
    m_hurried = m_hurried || filling;
    m_sleeping = false;
  }
  if (wake) {
    m_cv.notify_one();
  }
  return true;
}

std::uint64_t Writer::dropped() {
  std::lock_guard lock(m_mutex);
  return m_dropped;
}

bool Writer::should_give_up(std::int64_t now_us) const {
  const std::int64_t regular_budget = (m_deadline_us - m_finish_start_us) * 2 / 3;
  return now_us >= m_finish_start_us + regular_budget ||
         (m_stalled_since_us != 0 && now_us - m_stalled_since_us >= k_stall_give_up_us);
}

void Writer::run() {
  std::unique_lock lock(m_mutex);
  m_running = true;
  m_cv.notify_all();
  const auto has_work = [this] { return !m_front.empty() || m_finishing; };
  bool failed = false;
  for (;;) {
    if (m_back_pos >= m_back.size()) {
      m_back.clear();
      m_back_pos = 0;
      if (m_front.empty()) {
        m_drained = true;
        if (m_finishing) {
          break;
        }
        if (!m_cv.wait_for(lock, k_linger, has_work)) {
          m_sleeping = true;
          m_cv.wait(lock, has_work);
          m_sleeping = false;
        }
        continue;
      }
      std::swap(m_front, m_back);
      m_hurried = false;
    }
    lock.unlock();
    std::uint64_t skipped = 0;
    const std::size_t before = m_back_pos;
    const WriteResult result = m_sink->write(m_back, m_back_pos, true, skipped);
    const std::int64_t now = mono_us();
    lock.lock();
    m_dropped += skipped;
    if (result == WriteResult::failed) {
      failed = true;
      break;
    }
    if (m_back_pos != before) {
      m_stalled_since_us = 0;
    }
    if (result == WriteResult::would_block) {
      if (m_stalled_since_us == 0) {
        m_stalled_since_us = now;
      }
      if (m_finishing && should_give_up(now)) {
        break;
      }
      m_cv.wait_for(lock, k_retry);
    }
  }
  // Whatever is left will never be written: count it.
  m_dropped += count_lines(std::string_view(m_back).substr(std::min(m_back_pos, m_back.size()))) +
               count_lines(m_front);
  m_back.clear();
  m_front.clear();
  m_accepting = false;
  m_drained = true;
  if (m_finishing && !failed) {
    const std::uint64_t dropped = m_dropped;
    const ComposeFinal compose = m_compose;
    lock.unlock();
    std::string lines;
    try {
      lines = compose(dropped);
    } catch (...) {
      lines.clear();
    }
    write_final(lines);
    lock.lock();
  }
  m_done = true;
  m_cv.notify_all();
}

void Writer::write_final(const std::string& lines) {
  std::size_t pos = 0;
  std::uint64_t skipped = 0;
  while (pos < lines.size()) {
    const WriteResult result = m_sink->write(lines, pos, false, skipped);
    if (result != WriteResult::would_block || mono_us() >= m_deadline_us) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Writer::finish(const ComposeFinal& compose_final, std::chrono::milliseconds timeout) {
  std::unique_lock lock(m_mutex);
  if (m_finishing) {
    return;
  }
  m_finishing = true;
  m_compose = compose_final;
  m_finish_start_us = mono_us();
  m_deadline_us =
      m_finish_start_us + std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  m_cv.notify_all();
  if (!m_thread.joinable()) {
    return;
  }
  const auto wait_limit =
      std::chrono::steady_clock::now() + timeout + std::chrono::milliseconds(10);
  if (m_cv.wait_until(lock, wait_limit, [this] { return m_done; })) {
    lock.unlock();
    m_thread.join();
  }
  // Otherwise the thread is stuck in a blocking write (a pipe nobody
  // reads): it stays behind; the process is about to exit anyway.
}

void Writer::hold_for_fork() noexcept { m_mutex.lock(); }

void Writer::release_after_fork() noexcept { m_mutex.unlock(); }

void Writer::abandon_in_child() noexcept {
  m_accepting.store(false);
  m_sink->close_in_child();
}

}  // namespace trace2d::client::detail
