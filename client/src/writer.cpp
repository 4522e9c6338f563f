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
// On an explicit shutdown(timeout), a collector that has taken nothing for
// this long is given up on at once: it is stopped or gone, and waiting
// longer would only delay the caller.
constexpr std::int64_t k_stall_give_up_us = 20000;
// At exit, a collector that keeps taking the queue is waited for (git itself
// blocks until its lines are written): the exit may take as long as what is
// still queued needs at this rate, when that is longer than the caller's
// timeout. 1 byte per microsecond (1 MB/s, some 6,000 lines a second) is a
// small fraction of what even a loaded trace2d reads; a full 1 MiB queue
// (the default) may hold the exit up to 1.6 s, a 64 MiB one up to 100 s,
// and only while the collector keeps taking it (should_give_up() says when
// one that stopped is given up on).
constexpr std::uint64_t k_exit_drain_bytes_per_us = 1;
// At exit, how long a collector that has been taking the queue may pause.
constexpr std::int64_t k_busy_collector_patience_us = 1'000'000;

std::uint64_t count_lines(std::string_view bytes) {
  return static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\n'));
}

}  // namespace

Writer::Writer(std::unique_ptr<Sink> sink, std::size_t queue_bytes)
    : m_sink(std::move(sink)),
      m_capacity(queue_bytes),
      m_ordinary_capacity(queue_bytes - queue_bytes / k_stitching_share) {
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

bool Writer::push(std::string_view line, Line kind) noexcept {
  bool wake = false;
  {
    std::lock_guard lock(m_mutex);
    if (m_finishing || !m_accepting.load(std::memory_order_relaxed)) {
      return false;
    }
    if (m_front.size() + line.size() >
        (kind == Line::stitching ? m_capacity : m_ordinary_capacity)) {
      count_drop();
      return false;
    }
    try {
      m_front.append(line);
    } catch (...) {
      count_drop();
      return false;
    }
    m_pushed_total += line.size();
    m_queued.store(m_front.size(), std::memory_order_relaxed);
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

bool Writer::flush(std::chrono::milliseconds timeout) noexcept {
  try {
    std::unique_lock lock(m_mutex);
    const std::uint64_t target = m_pushed_total;
    if (m_written_total >= target) {
      return true;
    }
    if (m_done || !m_thread.joinable()) {
      return false;  // nobody will write it any more
    }
    ++m_flush_waiters;
    m_sleeping = false;
    m_cv.notify_all();  // end the writer's lingering: it takes the queue now
    const bool flushed =
        m_cv.wait_for(lock, timeout, [&] { return m_written_total >= target || m_done; }) &&
        m_written_total >= target;
    --m_flush_waiters;
    return flushed;
  } catch (...) {
    return false;  // a broken mutex or clock: say it did not flush
  }
}

bool Writer::should_give_up(std::int64_t now_us) const {
  const std::int64_t regular_budget = (m_deadline_us - m_finish_start_us) * 2 / 3;
  const bool stalled = m_stalled_since_us != 0;
  if (m_patience == Patience::timeout) {
    return now_us >= m_finish_start_us + regular_budget ||
           (stalled && now_us - m_stalled_since_us >= k_stall_give_up_us);
  }
  // At exit. A collector that has taken nothing since the exit began is
  // stopped, gone or busy (trace2d pauses a sender while its pipeline
  // catches up): it gets the caller's timeout (its regular part), no more,
  // so a stopped one delays the exit that long. One that took part of the
  // queue is reading: it may pause k_busy_collector_patience_us (or the
  // timeout, when longer) between takes, within the budget of the bytes.
  if (!m_taken_while_finishing) {
    return now_us >= m_finish_start_us + m_timeout_us * 2 / 3;
  }
  return now_us >= m_finish_start_us + regular_budget ||
         (stalled && now_us - m_stalled_since_us >= std::max(k_busy_collector_patience_us, m_timeout_us));
}

void Writer::run() {
  std::unique_lock lock(m_mutex);
  m_running = true;
  m_cv.notify_all();
  const auto has_work = [this] { return !m_front.empty() || m_finishing; };
  bool failed = false;
  bool said_room = false;  // the datagram socket said it had room (and nothing was sent since)
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
      m_queued.store(0, std::memory_order_relaxed);
      m_hurried = false;
    }
    lock.unlock();
    std::uint64_t skipped = 0;
    const std::size_t before = m_back_pos;
    const WriteResult result = m_sink->write(m_back, m_back_pos, true, skipped);
    const std::int64_t now = mono_us();
    lock.lock();
    m_dropped.fetch_add(skipped, std::memory_order_relaxed);
    m_dropped_target.fetch_add(skipped, std::memory_order_relaxed);
    m_written_total += m_back_pos - before;
    if (m_flush_waiters > 0 && m_back_pos != before) {
      m_cv.notify_all();
    }
    if (result == WriteResult::failed) {
      failed = true;
      break;
    }
    if (m_back_pos != before) {
      m_stalled_since_us = 0;
      m_taken_while_finishing = m_finishing;
      said_room = false;
    }
    if (result == WriteResult::would_block) {
      if (m_stalled_since_us == 0) {
        m_stalled_since_us = now;
      }
      if (m_finishing && should_give_up(now)) {
        break;
      }
      // A datagram collector's queue holds ten: waiting a fixed k_retry
      // for it let out 2,000 lines a second, and a program's last ones were
      // lost at exit. Its socket says when there is room; when it said so
      // and the send blocked anyway, the fixed wait, so as never to spin.
      if (!said_room && m_sink->kind() == SinkKind::dgram) {
        lock.unlock();
        said_room = m_sink->wait_for_room(k_retry);
        lock.lock();
      } else {
        said_room = false;
        m_cv.wait_for(lock, k_retry);
      }
    }
  }
  // Whatever is left will never be written: count it.
  const std::uint64_t left =
      count_lines(std::string_view(m_back).substr(std::min(m_back_pos, m_back.size()))) +
      count_lines(m_front);
  m_dropped.fetch_add(left, std::memory_order_relaxed);
  m_dropped_target.fetch_add(left, std::memory_order_relaxed);
  m_back.clear();
  m_front.clear();
  m_queued.store(0, std::memory_order_relaxed);
  m_accepting = false;
  m_drained = true;
  if (m_finishing && !failed) {
    const std::uint64_t dropped = m_dropped.load();
    const ComposeFinal compose = m_compose;
    lock.unlock();
    std::string lines;
    bool composed = true;
    try {
      lines = compose(dropped);
    } catch (...) {
      composed = false;  // the final events are lost: finish() says so
    }
    const bool written = composed && write_final(lines);
    lock.lock();
    m_final_written = written && dropped == 0;
  }
  m_done = true;
  m_cv.notify_all();
}

bool Writer::write_final(const std::string& lines) {
  std::size_t pos = 0;
  std::uint64_t skipped = 0;
  while (pos < lines.size()) {
    const WriteResult result = m_sink->write(lines, pos, false, skipped);
    if (result == WriteResult::done) {
      break;
    }
    if (result != WriteResult::would_block || mono_us() >= m_deadline_us) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return skipped == 0;
}

bool Writer::finish(const ComposeFinal& compose_final, std::chrono::milliseconds timeout, Patience patience) {
  std::unique_lock lock(m_mutex);
  if (m_finishing) {
    return false;  // finished before: those final lines were the last
  }
  m_finishing = true;
  m_compose = compose_final;
  m_patience = patience;
  m_timeout_us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  m_finish_start_us = mono_us();
  // The queue's own part of the budget (should_give_up()) is two thirds of
  // it, the rest is for the final lines: the drain time goes in at 3/2.
  const auto drain_us = static_cast<std::int64_t>((m_pushed_total - m_written_total) / k_exit_drain_bytes_per_us);
  const std::chrono::microseconds budget =
      patience == Patience::while_taken
          ? std::max<std::chrono::microseconds>(timeout, std::chrono::microseconds(drain_us * 3 / 2))
          : std::chrono::microseconds(timeout);
  m_deadline_us = m_finish_start_us + budget.count();
  m_cv.notify_all();
  if (!m_thread.joinable()) {
    return false;
  }
  const auto wait_limit = std::chrono::steady_clock::now() + budget + std::chrono::milliseconds(10);
  if (m_cv.wait_until(lock, wait_limit, [this] { return m_done; })) {
    const bool complete = m_final_written;
    lock.unlock();
    m_thread.join();
    return complete;
  }
  // Otherwise the thread is stuck in a blocking write (a pipe nobody
  // reads): it stays behind; the process is about to exit anyway.
  return false;
}

void Writer::hold_for_fork() noexcept { m_mutex.lock(); }

void Writer::release_after_fork() noexcept { m_mutex.unlock(); }

void Writer::abandon_in_child() noexcept {
  m_accepting.store(false);
  m_sink->close_in_child();
}

}  // namespace trace2d::client::detail
