#pragma once
// The single SQLite writer. Runs on its own thread, takes WriteBatches from
// the pipeline, and commits them in transactions that close when the input
// goes quiet (`idle_commit_gap`), or at the latest after `commit_interval`
// (or `max_rows_per_transaction` rows): the database sees few, large
// transactions under load and fresh data within milliseconds when idle.
//
// A failed write (locked database, full disk, read-only file) rolls back and
// is retried with backoff; the batches stay queued meanwhile and count
// against the daemon's memory bound. Nothing is dropped here.
//
// SQLite writes through open descriptors, so a database file removed (or
// replaced) under the writer would go on taking commits that vanish with
// it. Before each commit, and at least once a second otherwise, the writer
// checks that the path still names the file it opened; when it does not,
// it logs an error, rolls back, creates a new database at the path, writes
// into it every name handed out so far (events refer to names by id), and
// commits what it holds there.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/ingest/memory_budget.hpp"
#include "daemon/ingest/work_queue.hpp"
#include "db/database_setup.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/retention.hpp"
#include "daemon/store/row_writer.hpp"
#include "db/sqlite.hpp"
#include "daemon/store/write_batch.hpp"

namespace trace2d::store {

// Time from reading a line to committing it, over recent commits.
struct CommitLatency {
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
  std::size_t samples = 0;
};

// The same time for every batch committed since the start, in buckets:
// what /metrics offers as a histogram (Prometheus computes its quantiles
// over any window; the ring of the last 1024 above cannot be summed).
struct CommitLatencyHistogram {
  // Upper bounds in seconds: from a commit on an idle host (a few ms) to
  // one held back by a busy disk.
  static constexpr std::array<double, 12> k_bounds_s{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                     0.1,   0.25,   0.5,   1,    2.5,   5};
  std::array<std::uint64_t, k_bounds_s.size() + 1> buckets{};  // per bound, then +Inf; not cumulative
  double sum_s = 0;
  std::uint64_t count = 0;
};

class StoreWriter {
 public:
  // Writes the daemon's status rows; called on the writer thread inside a
  // transaction, every `status_interval`.
  using StatusHook = std::function<void(db::Database&)>;

  struct Options {
    std::chrono::milliseconds commit_interval{100};
    // A transaction whose input has been quiet this long is committed at
    // once: on an idle host what git just sent is queryable within a few
    // milliseconds, while under load batches keep arriving sooner than
    // this and transactions stay large.
    std::chrono::milliseconds idle_commit_gap{2};
    std::size_t max_rows_per_transaction = 50000;
    std::chrono::milliseconds max_retry_backoff{1000};
    std::chrono::milliseconds status_interval{2000};
    StatusHook status_hook;
    Retention::Options retention;
    // The names handed out so far, written again into a recreated database
    // (nullptr: there are none to keep).
    const NameTable* names = nullptr;
  };

  StoreWriter(db::Database db, ingest::WorkQueue<WriteBatch>& input, ingest::MemoryBudget& budget,
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
  [[nodiscard]] CommitLatencyHistogram commit_latency_histogram() const;
  [[nodiscard]] std::uint64_t files_removed() const { return m_files_removed.load(); }
  [[nodiscard]] std::uint64_t sessions_pruned() const { return m_sessions_pruned.load(); }
  // How many times the database was recreated after its file was removed
  // or replaced; also tells other connections to open the path again.
  [[nodiscard]] std::uint64_t database_recreated() const { return m_database_recreated.load(); }
  // How long since the writer loop last went round (it does at least every
  // ~1 s, committing, waiting or retrying): a liveness signal.
  [[nodiscard]] std::chrono::steady_clock::duration since_heartbeat() const {
    return std::chrono::steady_clock::now() -
           std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(m_heartbeat.load()));
  }

 private:
  // Everything bound to one SQLite connection, replaced as a whole when the
  // database is recreated. Not movable: the statements point at `db`.
  struct Connection {
    Connection(db::Database database, const Retention::Options& retention_options)
        : db(std::move(database)), rows(db), retention(db, retention_options) {}
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    db::Database db;  // declared first: outlives the statements below
    RowWriter rows;
    Retention retention;
  };

  enum class FileCheck {
    in_place,   // the path names the open database (or it cannot be told)
    recreated,  // it did not: the transaction was dropped, the new database is open
    unusable,   // it did not, and no new database could be used yet
  };

  bool write_pending();  // false on failure (rolled back)
  bool commit();
  void rollback();        // counts a failed commit
  void drop_transaction();  // rollback without counting a failure
  void after_commit(std::int64_t now_us);
  // Logs a failed write or commit: at its start, then once a minute.
  void note_failure(std::string_view what, const db::SqliteError& e);
  void write_status_if_due();
  void maintain();  // retention, between batches
  FileCheck check_database_file();
  bool recreate_database(const std::optional<db::FileIdentity>& found);
  // Why the file now at `path` must not become this run's database, or
  // nullopt when it may (empty, or a trace2d database without sessions).
  [[nodiscard]] static std::optional<std::string> refuse_replacement(const std::string& path);
  // Writes the names of m_options.names into `db`; false when one of them
  // has another id there.
  [[nodiscard]] bool write_names(db::Database& db) const;

  std::unique_ptr<Connection> m_conn;
  std::chrono::steady_clock::time_point m_next_retention{};
  std::size_t m_committed_since_retention = 0;  // batch bytes committed since retention last looked
  std::chrono::steady_clock::time_point m_last_commit{};  // of batches, for retention's headroom
  std::uint64_t m_pruned_before = 0;  // sessions pruned in databases since recreated

  db::DatabaseFiles m_files;  // what m_conn->db is on disk
  std::chrono::steady_clock::time_point m_next_file_check{};
  // While the path does not name m_conn->db: what it named when last
  // reported (nullopt: nothing), so each change is logged once.
  bool m_moved = false;
  std::optional<db::FileIdentity> m_moved_to;
  bool m_recreate_failure_logged = false;
  std::optional<db::FileIdentity> m_refused;  // a replacement holding other data
  ingest::WorkQueue<WriteBatch>& m_input;
  ingest::MemoryBudget& m_budget;
  Options m_options;

  std::vector<WriteBatch> m_pending;  // taken from the queue, not yet committed
  std::size_t m_written = 0;          // how many of m_pending are in the open transaction
  std::size_t m_rows_in_transaction = 0;
  bool m_in_transaction = false;
  std::chrono::steady_clock::time_point m_transaction_started;
  std::chrono::steady_clock::time_point m_last_input{};  // when batches last arrived and were written

  std::atomic<std::uint64_t> m_committed_batch{0};
  std::atomic<std::uint64_t> m_committed_events{0};
  std::atomic<std::uint64_t> m_failed_commits{0};
  std::atomic<std::uint64_t> m_abandoned_events{0};
  std::atomic<bool> m_stop_retrying{false};
  // The current outage (writes or commits failing), for the log.
  bool m_failing = false;
  std::chrono::steady_clock::time_point m_failing_since{};
  std::chrono::steady_clock::time_point m_failing_reported{};
  std::uint64_t m_outage_attempts = 0;
  std::atomic<std::uint64_t> m_files_removed{0};
  std::atomic<std::uint64_t> m_sessions_pruned{0};
  std::atomic<std::uint64_t> m_database_recreated{0};
  std::atomic<std::chrono::steady_clock::rep> m_heartbeat{std::chrono::steady_clock::now().time_since_epoch().count()};

  mutable std::mutex m_latency_mutex;
  std::array<double, 1024> m_latencies_ms{};  // ring buffer
  std::size_t m_latency_count = 0;
  CommitLatencyHistogram m_latency_histogram;  // under m_latency_mutex
  std::chrono::steady_clock::time_point m_last_status{};
};

}  // namespace trace2d::store
