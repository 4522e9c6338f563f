#include "daemon/store/retention.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "proto/timestamp.hpp"

namespace trace2d::store {

Retention::Retention(Database& db, Options options)
    : m_db(db),
      m_options(options),
      // Running sessions are never pruned: their process is still talking.
      m_oldest_by_age(db.prepare(
          "SELECT id, event_count FROM sessions"
          " WHERE first_received < ?1 AND last_received < ?1 AND status != 'running'"
          " ORDER BY first_received LIMIT 1000")),
      m_oldest(db.prepare(
          "SELECT id, event_count FROM sessions WHERE status != 'running' ORDER BY first_received LIMIT 1000")),
      m_delete_events(db.prepare("DELETE FROM event_store WHERE session = ?")),
      m_delete_regions(db.prepare("DELETE FROM region_store WHERE session = ?")),
      m_delete_children(db.prepare("DELETE FROM child_store WHERE session = ?")),
      m_delete_problems(db.prepare("DELETE FROM problem_store WHERE session = ?")),
      m_delete_session(db.prepare("DELETE FROM sessions WHERE id = ?")) {}

std::uint64_t Retention::used_bytes() {
  const auto pages = m_db.query_int("PRAGMA page_count").value_or(0);
  const auto free = m_db.query_int("PRAGMA freelist_count").value_or(0);
  const auto size = m_db.query_int("PRAGMA page_size").value_or(4096);
  return static_cast<std::uint64_t>((pages - free) * size);
}

bool Retention::step() {
  if (!enabled()) {
    return false;
  }
  std::vector<std::int64_t> doomed;
  std::uint64_t events = 0;
  const auto collect = [&](Statement& query, std::uint64_t event_budget) {
    while ((doomed.empty() || events < event_budget) && query.step()) {
      doomed.push_back(query.column_int(0));
      events += static_cast<std::uint64_t>(query.column_int(1));
    }
    query.reset();
  };
  Transaction txn(m_db);
  if (m_options.max_age) {
    const std::int64_t cutoff_us =
        proto::unix_now_us() - std::chrono::duration_cast<std::chrono::microseconds>(*m_options.max_age).count();
    m_oldest_by_age.bind_text(1, proto::format_utc_timestamp(std::max<std::int64_t>(0, cutoff_us)));
    collect(m_oldest_by_age, m_options.max_events_per_step);
  }
  if (doomed.empty() && m_options.max_db_bytes > 0) {
    const std::uint64_t used = used_bytes();
    if (used > m_options.max_db_bytes) {
      // No more than the excess, at the database's average bytes per event:
      // the next step looks again.
      const auto stored = static_cast<std::uint64_t>(
          std::max<std::int64_t>(1, m_db.query_int("SELECT sum(event_count) FROM sessions").value_or(1)));
      const std::uint64_t per_event = std::max<std::uint64_t>(1, used / stored);
      collect(m_oldest, std::min(m_options.max_events_per_step, (used - m_options.max_db_bytes) / per_event + 1));
    }
  }
  for (const std::int64_t id : doomed) {
    for (Statement* stmt : {&m_delete_events, &m_delete_regions, &m_delete_children, &m_delete_problems,
                            &m_delete_session}) {
      stmt->bind_int(1, id);
      stmt->run();
    }
  }
  if (!doomed.empty()) {
    // Give freed pages back to the file system, a bounded amount per step.
    m_db.exec("PRAGMA incremental_vacuum(2000)");
  }
  txn.commit();
  m_sessions_deleted += doomed.size();
  m_events_deleted += events;
  if (!doomed.empty()) {
    spdlog::debug("retention: deleted {} sessions ({} events)", doomed.size(), events);
  }
  return !doomed.empty();
}

}  // namespace trace2d::store
