#include "db/otlp_queue.hpp"

namespace trace2d::db {
namespace {

constexpr std::string_view k_now = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

void delete_pending(Database& db, const std::vector<std::int64_t>& sessions) {
  Statement remove = db.prepare("DELETE FROM otlp_pending WHERE session_id = ?");
  for (const std::int64_t id : sessions) {
    remove.bind_int(1, id);
    remove.run();
  }
}

}  // namespace

void set_export_enabled(Database& db, bool enabled, const std::string& endpoint) {
  Statement update = db.prepare(
      "UPDATE otlp_export SET enabled = ?1, endpoint = ?2 WHERE id = 1 AND (enabled != ?1 OR endpoint IS NOT ?2)");
  update.bind_int(1, enabled ? 1 : 0);
  update.bind_text_or_null(2, endpoint);
  update.run();
}

std::vector<PendingSession> next_pending(Database& db, std::size_t limit) {
  Statement select = db.prepare(
      "SELECT p.session_id, s.sid, s.root_sid FROM otlp_pending p JOIN sessions s ON s.id = p.session_id"
      " WHERE s.status != 'running' ORDER BY p.session_id LIMIT ?");
  select.bind_int(1, static_cast<std::int64_t>(limit));
  std::vector<PendingSession> pending;
  while (select.step()) {
    pending.push_back({select.column_int(0), std::string(select.column_text(1)), std::string(select.column_text(2))});
  }
  return pending;
}

Backlog export_backlog(Database& db) {
  Backlog backlog;
  backlog.sessions = db.query_int("SELECT count(*) FROM otlp_pending").value_or(0);
  backlog.running = db.query_int(
                          "SELECT count(*) FROM otlp_pending p JOIN sessions s ON s.id = p.session_id"
                          " WHERE s.status = 'running'")
                        .value_or(0);
  return backlog;
}

void acknowledge(Database& db, const std::vector<std::int64_t>& sessions, std::int64_t spans,
                 std::int64_t rejected_spans) {
  Transaction txn(db);
  delete_pending(db, sessions);
  Statement update = db.prepare(
      "UPDATE otlp_export SET exported_sessions = exported_sessions + ?1, exported_spans = exported_spans + ?2,"
      " rejected_spans = rejected_spans + ?3, last_success = " + std::string(k_now) + " WHERE id = 1");
  update.bind_int(1, static_cast<std::int64_t>(sessions.size()));
  update.bind_int(2, spans);
  update.bind_int(3, rejected_spans);
  update.run();
  txn.commit();
}

void withhold(Database& db, const std::vector<std::int64_t>& sessions) {
  Transaction txn(db);
  delete_pending(db, sessions);
  Statement update = db.prepare("UPDATE otlp_export SET withheld_sessions = withheld_sessions + ?1 WHERE id = 1");
  update.bind_int(1, static_cast<std::int64_t>(sessions.size()));
  update.run();
  txn.commit();
}

void drop_pending(Database& db, const std::vector<std::int64_t>& sessions, const std::string& reason) {
  Transaction txn(db);
  delete_pending(db, sessions);
  Statement update = db.prepare(
      "UPDATE otlp_export SET dropped_sessions = dropped_sessions + ?1, failures = failures + 1,"
      " last_failure = " + std::string(k_now) + ", last_failure_reason = ?2 WHERE id = 1");
  update.bind_int(1, static_cast<std::int64_t>(sessions.size()));
  update.bind_text(2, reason);
  update.run();
  txn.commit();
}

std::int64_t drop_pruned(Database& db) {
  Transaction txn(db);
  db.exec("DELETE FROM otlp_pending WHERE session_id NOT IN (SELECT id FROM sessions)");
  const std::int64_t dropped = db.changes();
  if (dropped > 0) {
    Statement update = db.prepare("UPDATE otlp_export SET dropped_sessions = dropped_sessions + ?1 WHERE id = 1");
    update.bind_int(1, dropped);
    update.run();
  }
  txn.commit();
  return dropped;
}

void record_failure(Database& db, const std::string& reason) {
  Statement update = db.prepare("UPDATE otlp_export SET failures = failures + 1, last_failure = " +
                                std::string(k_now) + ", last_failure_reason = ?1 WHERE id = 1");
  update.bind_text(1, reason);
  update.run();
}

}  // namespace trace2d::db
