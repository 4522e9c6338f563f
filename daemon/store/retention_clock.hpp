#pragma once
// When retention runs: between the store writer's batches, never inside a
// transaction; soon after much was committed, near the size bound also
// between two commits while they keep coming, and its headroom only once
// ingest has been quiet. The writer calls it between batches; Retention
// (retention.hpp) decides what a step deletes.

#include <chrono>
#include <cstddef>

#include "daemon/store/retention.hpp"

namespace trace2d::store {

class RetentionClock {
 public:
  using clock = std::chrono::steady_clock;

  // `bytes` of batches were committed.
  void committed(std::size_t bytes);
  // Runs retention's steps if they are due. `batches_waiting`: the writer
  // has input queued (only steps past the size bound's slack run then).
  void maintain(Retention& retention, bool batches_waiting);
  // When it wants to run next, for the writer's wait.
  [[nodiscard]] clock::time_point next() const { return m_next; }
  // A new database: look at once.
  void restart() { m_next = {}; }

 private:
  clock::time_point m_next{};
  std::size_t m_committed_since = 0;  // batch bytes committed since retention last looked
  clock::time_point m_last_commit{};  // for the headroom
};

}  // namespace trace2d::store
