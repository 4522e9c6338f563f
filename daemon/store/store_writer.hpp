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
// Before each commit, and at least once a second otherwise, the writer asks
// whether the path still names the file it writes into
// (database_file_guard.hpp); when it does not, it rolls back and writes
// what it holds into the new database the guard made there. Retention runs
// between batches, on its own clock (maintain()); commit latencies are
// recorded for status and /metrics (commit_latency.hpp).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/ingest/memory_budget.hpp"
#include "daemon/ingest/work_queue.hpp"
#include "daemon/settings/setting.hpp"
#include "daemon/store/commit_latency.hpp"
#include "daemon/store/database_file_guard.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/retention.hpp"
#include "daemon/store/retention_clock.hpp"
#include "daemon/store/row_writer.hpp"
#include "daemon/store/write_batch.hpp"
#include "db/sqlite.hpp"

namespace trace2d::store {

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

    // The settings that fill these (docs/configuration.md); `Self` is
    // Options or const Options.
    template <typename Self, typename Visitor>
    static void visit_settings(Self& o, Visitor& v) {
      using settings::k_hour_ms;
      using settings::Key;
      using settings::Range;
      v.integer(Key{"database", "commit_interval_ms", "--commit-interval-ms", "MS",
                    "Longest time between commits under load"},
                o.commit_interval, Range{1, 10000});
      v.integer(Key{"status", "interval_ms", "--status-interval-ms", "MS", "How often the status tables are written"},
                o.status_interval, Range{100, k_hour_ms});
    }
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
  [[nodiscard]] CommitLatency commit_latency() const { return m_latency.recent(); }
  [[nodiscard]] CommitLatencyHistogram commit_latency_histogram() const { return m_latency.histogram(); }
  [[nodiscard]] std::uint64_t files_removed() const { return m_files_removed.load(); }
  // What retention deleted since the daemon started, in every database it
  // wrote (one recreated counts on).
  struct RetentionDeleted {
    std::uint64_t sessions = 0;
    std::uint64_t events = 0;
    std::uint64_t rejects = 0;
  };
  [[nodiscard]] RetentionDeleted retention_deleted() const {
    return {m_sessions_deleted.load(), m_events_deleted.load(), m_rejects_deleted.load()};
  }
  // Bytes of the database's pages in use (its file less its free pages):
  // what retention.max_db_bytes bounds, while the file itself shrinks only
  // as free pages are given back. Read with each status (status_interval).
  [[nodiscard]] std::uint64_t used_bytes() const { return m_used_bytes.load(); }
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
  void maintain();  // retention, between batches (retention_clock.hpp)
  FileCheck check_database_file();

  std::unique_ptr<Connection> m_conn;
  RetentionClock m_retention_clock;
  RetentionDeleted m_deleted_before;  // by retention in the databases before the one open
  RetentionDeleted m_deleted_logged;  // what the log has told
  std::chrono::steady_clock::time_point m_deletions_logged{};

  DatabaseFileGuard m_file_guard;
  bool m_connection_failure_logged = false;  // a new database whose connection could not be set up
  ingest::WorkQueue<WriteBatch>& m_input;
  ingest::MemoryBudget& m_budget;
  Options m_options;

  std::vector<WriteBatch> m_pending;  // taken from the queue, not yet committed
  std::size_t m_written = 0;          // how many of m_pending are in the open transaction
  std::size_t m_rows_in_transaction = 0;
  bool m_in_transaction = false;
  std::chrono::steady_clock::time_point m_transaction_started;
  std::chrono::steady_clock::time_point m_last_input{};  // when batches last arrived and were written
  std::chrono::steady_clock::time_point m_last_commit{};

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
  std::atomic<std::uint64_t> m_sessions_deleted{0};
  std::atomic<std::uint64_t> m_events_deleted{0};
  std::atomic<std::uint64_t> m_rejects_deleted{0};
  std::atomic<std::uint64_t> m_used_bytes{0};
  std::atomic<std::uint64_t> m_database_recreated{0};
  std::atomic<std::chrono::steady_clock::rep> m_heartbeat{std::chrono::steady_clock::now().time_since_epoch().count()};

  CommitLatencyRecorder m_latency;
  std::chrono::steady_clock::time_point m_last_status{};
};

}  // namespace trace2d::store
