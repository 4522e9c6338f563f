#pragma once
// The single SQLite writer. Runs on its own thread, takes WriteBatches from
// the pipeline, and commits them in transactions of at most
// `commit_interval` (or `max_rows_per_transaction` rows), so the database
// sees few, large transactions under load and fresh data within
// milliseconds when idle.
//
// A failed write (locked database, full disk, read-only file) rolls back and
// is retried with backoff; the batches stay queued meanwhile and count
// against the daemon's memory bound. Nothing is dropped here.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>

#include "daemon/pipeline/memory_budget.hpp"
#include "daemon/pipeline/work_queue.hpp"
#include "daemon/store/retention.hpp"
#include "daemon/store/row_writer.hpp"
#include "daemon/store/sqlite.hpp"
#include "daemon/store/write_batch.hpp"

namespace trace2d::store {

// Time from reading a line to committing it, over recent commits.
struct CommitLatency {
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
  std::size_t samples = 0;
};

class StoreWriter {
 public:
  // Writes the daemon's status rows; called on the writer thread inside a
  // transaction, every `status_interval`.
  using StatusHook = std::function<void(Database&)>;

  struct Options {
    std::chrono::milliseconds commit_interval{10};
    std::size_t max_rows_per_transaction = 50000;
    std::chrono::milliseconds max_retry_backoff{1000};
    std::chrono::milliseconds status_interval{2000};
    StatusHook status_hook;
    Retention::Options retention;
  };

  StoreWriter(Database db, pipeline::WorkQueue<WriteBatch>& input, pipeline::MemoryBudget& budget,
              Options options);

  // The thread body: returns once the input is closed and everything in it
  // is committed (or, if the database keeps failing, once `stop_retrying`
  // is set after close).
  void run();

  // After close: give up retrying a database that keeps failing.
  void stop_retrying() { m_stop_retrying.store(true); }

  [[nodiscard]] std::uint64_t committed_batch() const { return m_committed_batch.load(); }
  [[nodiscard]] std::uint64_t committed_events() const { return m_committed_events.load(); }
  [[nodiscard]] std::uint64_t failed_commits() const { return m_failed_commits.load(); }
  [[nodiscard]] std::uint64_t abandoned_events() const { return m_abandoned_events.load(); }
  [[nodiscard]] CommitLatency commit_latency() const;
  [[nodiscard]] std::uint64_t files_removed() const { return m_files_removed.load(); }
  [[nodiscard]] std::uint64_t sessions_pruned() const { return m_sessions_pruned.load(); }
  // How long since the writer loop last went round (it does at least every
  // ~1 s, committing, waiting or retrying): a liveness signal.
  [[nodiscard]] std::chrono::steady_clock::duration since_heartbeat() const {
    return std::chrono::steady_clock::now() -
           std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(m_heartbeat.load()));
  }

 private:
  bool write_pending();  // false on failure (rolled back)
  bool commit();
  void rollback();
  void after_commit(std::int64_t now_us);
  void write_status_if_due();
  void maintain();  // retention, between batches

  Database m_db;
  RowWriter m_rows;
  Retention m_retention;
  std::chrono::steady_clock::time_point m_next_retention{};
  pipeline::WorkQueue<WriteBatch>& m_input;
  pipeline::MemoryBudget& m_budget;
  Options m_options;

  std::vector<WriteBatch> m_pending;  // taken from the queue, not yet committed
  std::size_t m_written = 0;          // how many of m_pending are in the open transaction
  std::size_t m_rows_in_transaction = 0;
  bool m_in_transaction = false;
  std::chrono::steady_clock::time_point m_transaction_started;

  std::atomic<std::uint64_t> m_committed_batch{0};
  std::atomic<std::uint64_t> m_committed_events{0};
  std::atomic<std::uint64_t> m_failed_commits{0};
  std::atomic<std::uint64_t> m_abandoned_events{0};
  std::atomic<bool> m_stop_retrying{false};
  std::atomic<std::uint64_t> m_files_removed{0};
  std::atomic<std::uint64_t> m_sessions_pruned{0};
  std::atomic<std::chrono::steady_clock::rep> m_heartbeat{std::chrono::steady_clock::now().time_since_epoch().count()};

  mutable std::mutex m_latency_mutex;
  std::array<double, 1024> m_latencies_ms{};  // ring buffer
  std::size_t m_latency_count = 0;
  std::chrono::steady_clock::time_point m_last_status{};
};

}  // namespace trace2d::store
