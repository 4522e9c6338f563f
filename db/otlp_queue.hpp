#pragma once
// The OTLP exporter's durable queue (`otlp_pending`, schema v9) and its
// status row (`otlp_export`): which committed sessions still wait to be
// exported, and what the exporter has done. A session leaves the queue only
// once the collector acknowledged its spans (or refused them for good).

#include <cstdint>
#include <string>
#include <vector>

#include "db/sqlite.hpp"

namespace trace2d::db {

struct PendingSession {
  std::int64_t session_id = 0;
  std::string sid;
  std::string root_sid;
};

// Sessions are queued (by a trigger) only while this says so.
void set_export_enabled(Database& db, bool enabled, const std::string& endpoint);

// The oldest queued sessions that are no longer running, at most `limit`.
[[nodiscard]] std::vector<PendingSession> next_pending(Database& db, std::size_t limit);

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
// Queued sessions whose rows retention has pruned: dropped and counted.
std::int64_t drop_pruned(Database& db);
// A failed attempt (to be retried): counted, with its reason.
void record_failure(Database& db, const std::string& reason);

}  // namespace trace2d::db
