#pragma once
// The OTLP exporter's durable queue (`otlp_pending`, schema v9) and its
// status row (`otlp_export`): which committed sessions still wait to be
// exported, and what the exporter has done. A session leaves the queue only
// once the collector acknowledged its spans (or refused them for good).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/sqlite.hpp"

namespace trace2d::db {

struct PendingSession {
  std::int64_t session_id = 0;
  std::string sid;
  std::string tree_sid;  // the top of its tree (sessions.tree_sid): which tree it is sent with
  std::int64_t uid = -1;  // the sender (-1: none known, as for imported files)
  // What loading it costs: the bytes of its stored events (sessions.stored_bytes)
  // and their number; the exporter bounds a round by them.
  std::int64_t stored_bytes = 0;
  std::int64_t event_count = 0;
};

// Sessions are queued (by a trigger) only while this says so.
void set_export_enabled(Database& db, bool enabled, const std::string& endpoint);

// One round's sessions: the senders (uids) take turns, so one uid's flood
// never holds back another's sessions by more than a round.
struct PendingTurn {
  // Interleaved: each uid's oldest first, one uid after the other.
  std::vector<PendingSession> sessions;
  // Where the next round starts when this one sends them all: the uid after
  // the last one that had a turn.
  std::int64_t next_uid = 0;
};

// The next queued sessions that are no longer running, at most `limit`:
// starting with the first uid >= `first_uid` that has sessions queued, each
// uid in turn takes up to `per_uid` of its oldest; room left when every uid
// has had its turn goes round again (so one uid alone fills a request). Each uid is found,
// and its sessions read, through the index otlp_pending (uid, session_id):
// a round reads of the queue what it takes, and of each uid's its running
// sessions at the head of its queue (which the stitcher bounds per uid).
[[nodiscard]] PendingTurn next_pending(Database& db, std::size_t limit, std::size_t per_uid,
                                       std::int64_t first_uid);

// Where a session too big to load whole is cut for its export: its first
// events (by seq), at most `max_events` of them and, the first whatever
// its size, as many more as keep their text (event_store.body) within
// `max_bytes`. Reads at most that much. nullopt when the whole session fits.
struct ExportSlice {
  std::int64_t before_seq = 0;  // the first event left out
  std::int64_t events = 0;      // events in the slice
};
[[nodiscard]] std::optional<ExportSlice> export_slice(Database& db, std::int64_t session_id, std::int64_t max_events,
                                                      std::int64_t max_bytes);

// Queued sessions: all, and those still running.
struct Backlog {
  std::int64_t sessions = 0;
  std::int64_t running = 0;
};
[[nodiscard]] Backlog export_backlog(Database& db);

// The collector acknowledged these sessions' spans.
void acknowledge(Database& db, const std::vector<std::int64_t>& sessions, std::int64_t spans,
                 std::int64_t rejected_spans);
// These sessions are dropped from the queue for good (the collector refused
// them as bad data, or retention pruned them): counted with `reason`.
void drop_pending(Database& db, const std::vector<std::int64_t>& sessions, const std::string& reason);
// A detail rule dropped these sessions (dl:drop): nothing to send; they
// leave the queue, counted in otlp_export.withheld_sessions (schema v10).
void withhold(Database& db, const std::vector<std::int64_t>& sessions);
// A failed attempt (to be retried): counted, with its reason.
void record_failure(Database& db, const std::string& reason);

}  // namespace trace2d::db
