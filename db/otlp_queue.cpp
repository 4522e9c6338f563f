#include "db/otlp_queue.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "db/event_types.hpp"
#include "proto/event.hpp"

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

PendingTurn next_pending(Database& db, std::size_t limit, std::size_t per_uid, std::int64_t first_uid,
                         const std::unordered_set<std::int64_t>& claimed, const Settling& settling) {
  Statement next_uid = db.prepare("SELECT uid FROM otlp_pending WHERE uid >= ?1 ORDER BY uid LIMIT 1");
  // Not yet settled (Settling): a CASE, so that the last event is looked
  // up (by the primary key) only for a session quiet for less than the
  // longer bound.
  const std::string ended = std::to_string(stored_type(proto::EventKind::exit)) + "," +
                            std::to_string(stored_type(proto::EventKind::atexit)) + "," +
                            std::to_string(stored_type(proto::EventKind::signal));
  Statement select = db.prepare(
      "SELECT p.session_id, s.sid, coalesce(s.tree_sid, s.root_sid), s.stored_bytes, s.event_count,"
      "       CASE WHEN ?4 = '' OR s.last_received IS NULL THEN 0 WHEN s.last_received > ?4 THEN 1"
      "            WHEN s.status = 'complete' AND s.last_received > ?5"
      "            THEN coalesce((SELECT e.type NOT IN (" +
      ended +
      ") FROM event_store e"
      "                           WHERE e.session = s.id ORDER BY e.seq DESC LIMIT 1), 0)"
      "            ELSE 0 END"
      "  FROM otlp_pending p JOIN sessions s ON s.id = p.session_id"
      " WHERE p.uid = ?1 AND p.session_id > ?2 AND s.status != 'running' ORDER BY p.session_id LIMIT ?3");
  const auto uid_from = [&](std::int64_t from) -> std::optional<std::int64_t> {
    next_uid.reset();
    next_uid.bind_int(1, from);
    if (next_uid.step()) {
      return next_uid.column_int(0);
    }
    return std::nullopt;
  };
  const auto after = [&](std::int64_t uid) -> std::optional<std::int64_t> {
    const std::optional<std::int64_t> next =
        uid == std::numeric_limits<std::int64_t>::max() ? std::nullopt : uid_from(uid + 1);
    return next ? next : uid_from(std::numeric_limits<std::int64_t>::min());  // round the uids, from the first
  };
  PendingTurn turn;
  turn.next_uid = first_uid;
  // Each uid's sessions in this round, in the order the uids had turns.
  std::vector<std::vector<PendingSession>> by_uid;
  std::map<std::int64_t, std::size_t> slot_of;  // uid -> index in by_uid
  std::size_t taken = 0;
  std::optional<std::int64_t> uid = uid_from(first_uid);
  if (!uid) {
    uid = after(first_uid);
  }
  const std::optional<std::int64_t> first = uid;
  // Laps round the uids: in the first each uid takes up to `per_uid`; room
  // left over (fewer uids than turns) goes round again, so one uid alone
  // still fills a request.
  bool took = true;
  while (first && took && taken < limit) {
    took = false;
    while (uid && taken < limit) {
      const auto [slot, added] = slot_of.try_emplace(*uid, by_uid.size());
      if (added) {
        by_uid.emplace_back();
      }
      std::vector<PendingSession>& sessions = by_uid[slot->second];
      select.reset();
      select.bind_int(1, *uid);
      select.bind_int(2, sessions.empty() ? std::numeric_limits<std::int64_t>::min() : sessions.back().session_id);
      const std::size_t wanted = std::min(per_uid, limit - taken);
      select.bind_int(3, static_cast<std::int64_t>(wanted + claimed.size() + settling.max_passed));
      select.bind_text(4, settling.quiet_before);
      select.bind_text(5, settling.detached_quiet_before);
      const std::size_t before = sessions.size();
      std::size_t passed = 0;
      while (sessions.size() - before < wanted && select.step()) {
        if (claimed.contains(select.column_int(0))) {
          continue;
        }
        if (select.column_int(5) != 0) {
          if (++passed > settling.max_passed) {
            break;  // the rest of this uid's queue waits for those to settle
          }
          continue;
        }
        sessions.push_back({select.column_int(0), std::string(select.column_text(1)),
                            std::string(select.column_text(2)), *uid, select.column_int(3), select.column_int(4)});
      }
      taken += sessions.size() - before;
      took = took || sessions.size() > before;
      turn.next_uid = *uid == std::numeric_limits<std::int64_t>::max() ? std::numeric_limits<std::int64_t>::min()
                                                                        : *uid + 1;
      uid = after(*uid);
      if (uid == first) {
        break;  // every uid had its turn in this lap
      }
    }
  }
  // One of each uid, then the second of each, and so on: a request cut
  // short by its bound on spans has given every uid a session first.
  turn.sessions.reserve(taken);
  for (std::size_t rank = 0; turn.sessions.size() < taken; ++rank) {
    for (std::vector<PendingSession>& sessions : by_uid) {
      if (rank < sessions.size()) {
        turn.sessions.push_back(std::move(sessions[rank]));  // moved: two SIDs copied were two allocations a session
      }
    }
  }
  return turn;
}

std::optional<ExportSlice> export_slice(Database& db, std::int64_t session_id, std::int64_t max_events,
                                        std::int64_t max_bytes) {
  // In seq order through the primary key; length() of a text reads it, so
  // this stops at the first event past the bounds.
  Statement events =
      db.prepare("SELECT seq, length(body) FROM event_store WHERE session = ?1 ORDER BY seq");
  events.bind_int(1, session_id);
  ExportSlice slice;
  std::int64_t bytes = 0;
  while (events.step()) {
    bytes += events.column_int(1);
    if (slice.events > 0 && (slice.events >= max_events || bytes > max_bytes)) {
      slice.before_seq = events.column_int(0);
      return slice;
    }
    ++slice.events;
  }
  return std::nullopt;
}

ExportHealth export_health(Database& db) {
  ExportHealth health;
  const std::int64_t queued = db.query_int("SELECT count(*) FROM otlp_pending").value_or(0);
  health.running_sessions = db.query_int(
                                  "SELECT count(*) FROM otlp_pending p JOIN sessions s ON s.id = p.session_id"
                                  " WHERE s.status = 'running'")
                                .value_or(0);
  health.finished_sessions = std::max<std::int64_t>(0, queued - health.running_sessions);
  // The first finished session in queue order: past the running ones at
  // the head of the queue (which the stitcher bounds), not a scan of it all.
  Statement oldest = db.prepare(
      "SELECT (julianday(s.last_received) - 2440587.5) * 86400.0"
      "  FROM otlp_pending p JOIN sessions s ON s.id = p.session_id"
      " WHERE s.status != 'running' ORDER BY p.session_id LIMIT 1");
  if (oldest.step() && !oldest.column_is_null(0)) {
    health.oldest_finished_at = oldest.column_double(0);
  }
  Statement figures = db.prepare(
      "SELECT (julianday(last_success) - 2440587.5) * 86400.0, rejected_spans FROM otlp_export WHERE id = 1");
  if (figures.step()) {
    if (!figures.column_is_null(0)) {
      health.last_success_at = figures.column_double(0);
    }
    health.rejected_spans = figures.column_int(1);
  }
  Statement dropped = db.prepare("SELECT reason, sessions FROM otlp_dropped ORDER BY reason");
  while (dropped.step()) {
    health.dropped.emplace_back(std::string(dropped.column_text(0)), dropped.column_int(1));
  }
  return health;
}

std::string_view to_string(DropReason reason) {
  switch (reason) {
    case DropReason::bad_request:
      return "bad_request";
    case DropReason::too_large:
      return "too_large";
  }
  return "unknown";
}

void acknowledge(Database& db, const std::vector<std::int64_t>& sessions, std::int64_t spans,
                 std::int64_t rejected_spans) {
  Transaction txn(db);
  delete_pending(db, sessions);
  Statement update = db.prepare(
      "UPDATE otlp_export SET exported_sessions = exported_sessions + ?1, exported_spans = exported_spans + ?2,"
      " rejected_spans = rejected_spans + ?3, last_success = " + std::string(k_now) + ", paused_since = NULL"
      " WHERE id = 1");
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

void drop_pending(Database& db, const std::vector<std::int64_t>& sessions, DropReason reason,
                  const std::string& failure) {
  Transaction txn(db);
  delete_pending(db, sessions);
  // The collector answered: the export goes on, it is not paused.
  Statement update = db.prepare(
      "UPDATE otlp_export SET dropped_sessions = dropped_sessions + ?1, failures = failures + 1,"
      " last_failure = " + std::string(k_now) + ", last_failure_reason = ?2, paused_since = NULL WHERE id = 1");
  update.bind_int(1, static_cast<std::int64_t>(sessions.size()));
  update.bind_text(2, failure);
  update.run();
  Statement by_reason = db.prepare("UPDATE otlp_dropped SET sessions = sessions + ?1 WHERE reason = ?2");
  by_reason.bind_int(1, static_cast<std::int64_t>(sessions.size()));
  by_reason.bind_text(2, to_string(reason));
  by_reason.run();
  txn.commit();
}

void record_failure(Database& db, const std::string& reason) {
  Statement update = db.prepare("UPDATE otlp_export SET failures = failures + 1, last_failure = " +
                                std::string(k_now) + ", last_failure_reason = ?1, paused_since = coalesce("
                                "paused_since, " + std::string(k_now) + ") WHERE id = 1");
  update.bind_text(1, reason);
  update.run();
}

}  // namespace trace2d::db
