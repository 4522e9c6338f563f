#include "daemon/store/retention_clock.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "db/sqlite.hpp"

namespace trace2d::store {
namespace {

// Retention looks again this soon after this much has been committed, not
// only every 5 s: at full rate 5 s of ingest took the file 19% past its
// size bound before retention next looked (growth_bench).
constexpr std::size_t k_recheck_bytes = 1024 * 1024;
constexpr std::chrono::milliseconds k_recheck{20};
// Retention frees its headroom (Retention::Options::idle_headroom_bytes)
// only after this long without a commit: at full rate the queue is empty
// for moments between batches, and deleting then is deleting during the
// burst, which the headroom is there to spare.
constexpr std::chrono::seconds k_quiet_before_headroom{1};
// Past the slack while batches keep coming, steps follow one another until
// pages in use are back under it, this many at most: one commit can store
// more than a step deletes (50,000 rows against 20,000 events), and at one
// step a commit the file grew past its bound for the length of a burst.
constexpr int k_max_busy_steps = 8;

}  // namespace

void RetentionClock::committed(std::size_t bytes) {
  m_committed_since += bytes;
  m_last_commit = clock::now();
  if (m_committed_since >= k_recheck_bytes) {
    m_next = std::min(m_next, clock::now() + k_recheck);
  }
}

void RetentionClock::maintain(Retention& retention, bool batches_waiting) {
  const auto now = clock::now();
  if (!retention.enabled() || now < m_next) {
    return;
  }
  // Between batches while none waits; near the size bound (pages in use
  // past its slack), also between two commits while they keep coming, until
  // back under it: at full rate the queue is never empty, and the file
  // would grow until the burst ended.
  if (batches_waiting && m_committed_since == 0) {
    return;
  }
  try {
    if (batches_waiting && !retention.due_while_busy()) {
      m_next = now + k_recheck;
      return;
    }
    const bool quiet = !batches_waiting && now - m_last_commit >= k_quiet_before_headroom;
    m_committed_since = 0;
    bool more = retention.step(quiet);
    for (int steps = 1; more && batches_waiting && steps < k_max_busy_steps && retention.due_while_busy(); ++steps) {
      more = retention.step(false);
    }
    // While there is more to prune, the next step as soon as no batch
    // waits (or, over the bound, after the next commit); otherwise look
    // again in five seconds (two indexed queries), or once ingest has been
    // quiet long enough for the headroom.
    m_next = more    ? now
             : quiet ? now + std::chrono::milliseconds(5000)
                     : std::max(now, m_last_commit + k_quiet_before_headroom);
  } catch (const db::SqliteError& e) {
    if (!e.is_busy()) {
      spdlog::warn("retention: {}", e.what());
    }
    m_next = now + std::chrono::seconds(1);
  }
}

}  // namespace trace2d::store
