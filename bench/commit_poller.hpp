#pragma once
// Watches trace2d's database from a read-only connection and counts the
// events committed so far, cheaply enough to poll every millisecond while
// trace2d runs at full speed on the same cores.
//
// Session ids are given in arrival order and committed in order, so only
// sessions from the lowest one not yet complete upwards are read each time
// (`sessions.event_count` through the index on `id`), never the whole table.
// Optionally it records, per session, when each new count became visible:
// the time an event was first seen committed, for the latency benchmark.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/support.hpp"
#include "db/sqlite.hpp"

namespace trace2d::bench {

class CommitPoller {
 public:
  // `expected`: events each SID will have when all of it is committed.
  // Sessions below `first_id` (a database filled beforehand) are never read.
  CommitPoller(const std::string& db_path, std::unordered_map<std::string, std::int64_t> expected,
               bool record_steps, std::int64_t first_id = 0);

  // One look; returns the events committed so far.
  std::int64_t poll();

  // Polls every `interval` until `total` events are committed or nothing has
  // changed for `stall` (then returns false). The time of the poll that saw
  // the last event is in `done_at`.
  bool wait_for(std::int64_t total, std::chrono::microseconds interval, std::chrono::seconds stall,
                Clock::time_point& done_at);

  [[nodiscard]] std::int64_t committed() const { return m_committed; }
  // The poller's own cost, to show it stays small next to trace2d's.
  [[nodiscard]] std::int64_t polls() const { return m_polls; }
  [[nodiscard]] std::int64_t rows_read() const { return m_rows_read; }
  [[nodiscard]] double poll_seconds() const { return m_poll_seconds; }

  // A session's count became `count` at `unix_us` (wall clock, as git's `time`).
  struct Step {
    std::int64_t count = 0;
    std::int64_t unix_us = 0;
  };
  // Commit-visible time of event `seq` of trace2d session `session`, if seen.
  [[nodiscard]] std::optional<std::int64_t> seen_at(std::int64_t session, std::int64_t seq) const;

 private:
  struct Progress {
    std::int64_t expected = 0;
    std::int64_t seen = 0;
    std::vector<Step> steps;
  };

  db::Database m_db;
  db::Statement m_query;
  std::unordered_map<std::string, std::int64_t> m_expected;
  bool m_record_steps;
  std::unordered_map<std::int64_t, Progress> m_sessions;
  std::set<std::int64_t> m_open;  // ids seen, not yet complete
  std::int64_t m_next_unseen = 0;  // above every id seen so far
  std::int64_t m_committed = 0;
  std::int64_t m_polls = 0;
  std::int64_t m_rows_read = 0;
  double m_poll_seconds = 0;
};

}  // namespace trace2d::bench
