#pragma once
// The OTLP exporter's durable queue (`otlp_pending`, schema v9) and its
// status row (`otlp_export`): which committed sessions still wait to be
// exported, and what the exporter has done. A session leaves the queue only
// once the collector acknowledged its spans, or rejected them as malformed
// or too large (dropped, counted by reason), or retention deleted it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
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

// When a finished session may go. git's atexit does not always end what
// its session sends: `git gc --auto` forks and goes on in the background
// (gc.autoDetach) under the same SID, on the same connection, after its
// parent's atexit. A session sent at once would leave that out, and the
// spans of the git processes it runs would name a parent never sent. So a
// session goes once it has been quiet (sessions.last_received) since
// `quiet_before`; and one that is complete yet whose last event is not
// one that ends a process (exit, atexit, signal: it went on after its
// atexit, and has not ended again) only once quiet since
// `detached_quiet_before` (the detached gc's repack, or a long step of its
// own). An incomplete one's connection is gone: nothing more comes.
// Times in the format of last_received; empty: every finished session may
// go.
struct Settling {
  std::string quiet_before;
  std::string detached_quiet_before;
  // Sessions not yet settled that a uid's turn passes over at most: past
  // them its turn ends, so a round reads little of a queue that waits.
  std::size_t max_passed = 64;
};

// The next queued sessions that are no longer running, at most `limit`:
// starting with the first uid >= `first_uid` that has sessions queued, each
// uid in turn takes up to `per_uid` of its oldest; room left when every uid
// has had its turn goes round again (so one uid alone fills a request). Each uid is found,
// and its sessions read, through the index otlp_pending (uid, session_id):
// a round reads of the queue what it takes, and of each uid's its running
// sessions at the head of its queue (which the stitcher bounds per uid).
// Sessions in `claimed` (a round already loaded or in flight: at most two
// rounds' worth) are passed over, so a uid reads at most that many more,
// and so are its sessions not yet settled (`settling`), up to its bound.
[[nodiscard]] PendingTurn next_pending(Database& db, std::size_t limit, std::size_t per_uid, std::int64_t first_uid,
                                       const std::unordered_set<std::int64_t>& claimed = {},
                                       const Settling& settling = {});

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

// What /metrics says of the export, read on the exporter's connection.
struct ExportHealth {
  std::int64_t finished_sessions = 0;  // queued and finished: what waits to be sent
  std::int64_t running_sessions = 0;   // queued and still running: not sendable yet
  // When the first finished session in the queue (the one queued first)
  // received its last event, in Unix seconds: how long the export lags.
  std::optional<double> oldest_finished_at;
  std::optional<double> last_success_at;  // Unix seconds; none before the first acknowledgement
  std::int64_t rejected_spans = 0;        // refused in accepted requests (partial_success)
  // Sessions dropped from the queue, by reason (otlp_dropped, schema v19),
  // in the order of their names.
  std::vector<std::pair<std::string, std::int64_t>> dropped;
};
[[nodiscard]] ExportHealth export_health(Database& db);

// Why sessions leave the queue without being delivered (otlp_dropped.reason;
// retention's, "retention", is counted by the schema's trigger).
enum class DropReason { bad_request, too_large };
[[nodiscard]] std::string_view to_string(DropReason reason);

// The collector acknowledged these sessions' spans: the export is not paused.
void acknowledge(Database& db, const std::vector<std::int64_t>& sessions, std::int64_t spans,
                 std::int64_t rejected_spans);
// These sessions are dropped from the queue for good: the collector
// rejected them as malformed (400) or too large even alone (413), which
// sending them again cannot change. Counted by `reason`, with `failure` (the
// answer) as the last failure; the export goes on (not paused).
void drop_pending(Database& db, const std::vector<std::int64_t>& sessions, DropReason reason,
                  const std::string& failure);
// A detail rule dropped these sessions (dl:drop): nothing to send; they
// leave the queue, counted in otlp_export.withheld_sessions (schema v10).
void withhold(Database& db, const std::vector<std::int64_t>& sessions);
// A failed attempt, to be retried: counted, with its reason; the export is
// paused (otlp_export.paused_since) until an acknowledgement.
void record_failure(Database& db, const std::string& reason);

}  // namespace trace2d::db
