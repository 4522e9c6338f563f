#include "bench/commit_poller.hpp"

#include <algorithm>
#include <thread>

#include "proto/timestamp.hpp"

namespace trace2d::bench {

CommitPoller::CommitPoller(const std::string& db_path, std::unordered_map<std::string, std::int64_t> expected,
                           bool record_steps, std::int64_t first_id)
    : m_db(db_path, db::OpenMode::read_only),
      m_expected(std::move(expected)),
      m_record_steps(record_steps),
      m_next_unseen(first_id) {
  m_db.set_busy_timeout(1000);
  m_query = m_db.prepare("SELECT id, sid, event_count FROM sessions WHERE id >= ?1");
}

std::int64_t CommitPoller::poll() {
  const std::int64_t low = m_open.empty() ? m_next_unseen : *m_open.begin();
  m_query.bind_int(1, low);
  // The read snapshot starts with the first step: whatever this poll sees was
  // committed before this moment (and after the previous poll's).
  const std::int64_t now_us = proto::unix_now_us();
  const auto started = Clock::now();
  ++m_polls;
  while (m_query.step()) {
    ++m_rows_read;
    const std::int64_t id = m_query.column_int(0);
    const std::int64_t count = m_query.column_int(2);
    auto it = m_sessions.find(id);
    if (it == m_sessions.end()) {
      if (id < m_next_unseen) {
        continue;  // complete and forgotten
      }
      const auto expected = m_expected.find(std::string(m_query.column_text(1)));
      Progress progress;
      progress.expected = expected == m_expected.end() ? 0 : expected->second;
      it = m_sessions.emplace(id, std::move(progress)).first;
      m_open.insert(id);
      m_next_unseen = std::max(m_next_unseen, id + 1);
    }
    Progress& progress = it->second;
    if (count > progress.seen) {
      m_committed += count - progress.seen;
      progress.seen = count;
      if (m_record_steps) {
        progress.steps.push_back(Step{count, now_us});
      }
    }
    if (progress.seen >= progress.expected) {
      m_open.erase(id);
      if (!m_record_steps) {
        m_sessions.erase(it);
      }
    }
  }
  m_query.reset();
  m_poll_seconds += seconds_between(started, Clock::now());
  return m_committed;
}

bool CommitPoller::wait_for(std::int64_t total, std::chrono::microseconds interval, std::chrono::seconds stall,
                            Clock::time_point& done_at) {
  std::int64_t last = -1;
  auto last_change = Clock::now();
  while (true) {
    const auto before = Clock::now();
    const std::int64_t now = poll();
    if (now >= total) {
      done_at = before;
      return true;
    }
    if (now != last) {
      last = now;
      last_change = before;
    } else if (before - last_change > stall) {
      done_at = before;
      return false;
    }
    std::this_thread::sleep_for(interval);
  }
}

std::optional<std::int64_t> CommitPoller::seen_at(std::int64_t session, std::int64_t seq) const {
  const auto it = m_sessions.find(session);
  if (it == m_sessions.end()) {
    return std::nullopt;
  }
  for (const Step& step : it->second.steps) {
    if (step.count > seq) {
      return step.unix_us;
    }
  }
  return std::nullopt;
}

}  // namespace trace2d::bench
