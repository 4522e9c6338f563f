#include "daemon/store/store_writer.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "proto/timestamp.hpp"

namespace trace2d::store {
namespace {

// A stat() per check: cheap next to a transaction, and seconds are short
// next to how long a removed database would otherwise swallow commits.
constexpr std::chrono::seconds k_file_check_interval{1};
// Retention looks again this soon after this much has been committed, not
// only every 5 s: at full rate 5 s of ingest took the file 19% past its
// size bound before retention next looked (growth_bench).
constexpr std::size_t k_retention_recheck_bytes = 1024 * 1024;
constexpr std::chrono::milliseconds k_retention_recheck{20};
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

// Removes `path` if it is still the file `identity` names.
void remove_if_same(const std::string& path, const std::optional<db::FileIdentity>& identity) {
  std::error_code error;
  if (identity && db::file_identity(path, error) == identity && ::unlink(path.c_str()) != 0 && errno != ENOENT) {
    spdlog::warn("store: cannot remove '{}': {}", path, std::strerror(errno));
  }
}

}  // namespace

StoreWriter::StoreWriter(db::Database db, ingest::WorkQueue<WriteBatch>& input,
                         ingest::MemoryBudget& budget, Options options)
    : m_conn(std::make_unique<Connection>(std::move(db), options.retention)),
      m_files(db::identify_database_files(m_conn->db.path())),
      m_next_file_check(std::chrono::steady_clock::now() + k_file_check_interval),
      m_input(input),
      m_budget(budget),
      m_options(std::move(options)) {}

void StoreWriter::maintain() {
  const auto now = std::chrono::steady_clock::now();
  Retention& retention = m_conn->retention;
  if (!retention.enabled() || m_in_transaction || now < m_next_retention) {
    return;
  }
  // Between batches while none waits; near the size bound (pages in use
  // past its slack), also between two commits while they keep coming, until
  // back under it: at full rate the queue is never empty, and the file
  // would grow until the burst ended.
  const bool batches_waiting = !m_input.empty();
  if (batches_waiting && m_committed_since_retention == 0) {
    return;
  }
  try {
    if (batches_waiting && !retention.due_while_busy()) {
      m_next_retention = now + k_retention_recheck;
      return;
    }
    const bool quiet = !batches_waiting && now - m_last_commit >= k_quiet_before_headroom;
    m_committed_since_retention = 0;
    bool more = retention.step(quiet);
    for (int steps = 1; more && batches_waiting && steps < k_max_busy_steps && retention.due_while_busy(); ++steps) {
      more = retention.step(false);
    }
    m_sessions_pruned.store(m_pruned_before + retention.sessions_deleted());
    // While there is more to prune, the next step as soon as no batch
    // waits (or, over the bound, after the next commit); otherwise look
    // again in five seconds (two indexed queries), or once ingest has been
    // quiet long enough for the headroom.
    m_next_retention = more    ? now
                       : quiet ? now + std::chrono::milliseconds(5000)
                               : std::max(now, m_last_commit + k_quiet_before_headroom);
  } catch (const db::SqliteError& e) {
    if (!e.is_busy()) {
      spdlog::warn("retention: {}", e.what());
    }
    m_next_retention = now + std::chrono::seconds(1);
  }
}

bool StoreWriter::write_pending() {
  try {
    if (!m_in_transaction) {
      m_conn->db.exec("BEGIN IMMEDIATE");
      m_in_transaction = true;
      m_transaction_started = std::chrono::steady_clock::now();
    }
    for (; m_written < m_pending.size(); ++m_written) {
      m_conn->rows.write(m_pending[m_written]);
      m_rows_in_transaction += m_pending[m_written].row_count();
    }
    return true;
  } catch (const db::SqliteError& e) {
    note_failure("write", e);
    rollback();
    return false;
  }
}

void StoreWriter::note_failure(std::string_view what, const db::SqliteError& e) {
  const auto now = std::chrono::steady_clock::now();
  ++m_outage_attempts;
  if (!m_failing) {
    m_failing = true;
    m_failing_since = now;
    m_failing_reported = now;
    m_outage_attempts = 1;
    if (e.is_busy()) {
      spdlog::warn("store: database '{}' is locked by another connection (for over 100 ms); holding events "
                   "in memory and retrying",
                   m_conn->db.path());
    } else {
      spdlog::error("store: {} failed on '{}', will retry: {}; holding events in memory (up to the queue bound)",
                    what, m_conn->db.path(), e.what());
    }
    return;
  }
  // Once a minute while it lasts, not once an attempt: a full disk can
  // last hours.
  if (now - m_failing_reported >= std::chrono::minutes(1)) {
    m_failing_reported = now;
    std::uint64_t bytes = 0;
    for (const WriteBatch& batch : m_pending) {
      bytes += batch.memory_bytes();
    }
    spdlog::warn("store: '{}' still failing after {} s ({} attempts), holding {} batches ({} KiB): {}",
                 m_conn->db.path(),
                 std::chrono::duration_cast<std::chrono::seconds>(now - m_failing_since).count(),
                 m_outage_attempts, m_pending.size(), bytes / 1024, e.what());
  } else {
    spdlog::debug("store: {} failed again: {}", what, e.what());
  }
}

bool StoreWriter::commit() {
  // Committed into a file that is no longer at the path, the transaction
  // would be lost with it. (A removal between this check and the COMMIT
  // still loses that one transaction.)
  switch (check_database_file()) {
    case FileCheck::in_place:
      break;
    case FileCheck::recreated:
      if (!write_pending()) {
        return false;
      }
      break;
    case FileCheck::unusable:
      rollback();
      return false;
  }
  try {
    m_conn->db.exec("COMMIT");
  } catch (const db::SqliteError& e) {
    note_failure("commit", e);
    rollback();
    return false;
  }
  m_in_transaction = false;
  if (m_failing) {
    m_failing = false;
    spdlog::info("store: writing again to '{}' after {} ms ({} failed attempts)", m_conn->db.path(),
                 std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                       m_failing_since)
                     .count(),
                 m_outage_attempts);
  }
  after_commit(proto::unix_now_us());
  return true;
}

void StoreWriter::after_commit(std::int64_t now_us) {
  std::size_t bytes = 0;
  std::size_t charged_to_uids = 0;
  std::uint64_t events = 0;
  {
    std::lock_guard lock(m_latency_mutex);
    for (const WriteBatch& batch : m_pending) {
      bytes += batch.memory_bytes();
      charged_to_uids += batch.charged_to_uids();
      events += batch.events.size();
      if (batch.oldest_received_us > 0) {
        const double ms = static_cast<double>(now_us - batch.oldest_received_us) / 1000.0;
        m_latencies_ms[m_latency_count++ % m_latencies_ms.size()] = ms;
        const auto& bounds = CommitLatencyHistogram::k_bounds_s;
        const double seconds = ms / 1000.0;
        // A bucket counts what is at most its bound (Prometheus's `le`).
        const auto bucket = std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin();
        ++m_latency_histogram.buckets[static_cast<std::size_t>(bucket)];
        m_latency_histogram.sum_s += seconds;
        ++m_latency_histogram.count;
      }
    }
  }
  // Finished trace files: their last lines are committed now, so removing
  // them can no longer lose anything.
  for (const WriteBatch& batch : m_pending) {
    for (const std::string& path : batch.remove_after_commit) {
      if (::unlink(path.c_str()) == 0) {
        m_files_removed.fetch_add(1);
      } else if (errno != ENOENT) {
        spdlog::warn("cannot remove finished trace file '{}': {}", path, std::strerror(errno));
      }
    }
  }
  for (const WriteBatch& batch : m_pending) {
    m_conn->retention.add_committed(batch);
  }
  m_conn->retention.add_row_charges(m_conn->rows.take_row_charges());
  m_conn->retention.subtract_erased(m_conn->rows.take_erased());
  m_committed_since_retention += bytes;
  m_last_commit = std::chrono::steady_clock::now();
  if (m_committed_since_retention >= k_retention_recheck_bytes) {
    m_next_retention = std::min(m_next_retention, std::chrono::steady_clock::now() + k_retention_recheck);
  }
  m_committed_batch.store(m_pending.back().number);
  m_committed_events.fetch_add(events);
  for (const WriteBatch& batch : m_pending) {
    for (const auto& [uid, charged] : batch.charged_uids) {
      m_budget.release(charged, uid);
    }
  }
  m_budget.release(bytes - std::min(bytes, charged_to_uids));
  m_pending.clear();
  m_written = 0;
  m_rows_in_transaction = 0;
}

CommitLatency StoreWriter::commit_latency() const {
  std::lock_guard lock(m_latency_mutex);
  const std::size_t n = std::min(m_latency_count, m_latencies_ms.size());
  if (n == 0) {
    return {};
  }
  std::vector<double> sorted(m_latencies_ms.begin(), m_latencies_ms.begin() + static_cast<std::ptrdiff_t>(n));
  std::sort(sorted.begin(), sorted.end());
  const auto at = [&](double q) { return sorted[std::min(n - 1, static_cast<std::size_t>(q * static_cast<double>(n)))]; };
  return {at(0.5), at(0.99), sorted.back(), n};
}

CommitLatencyHistogram StoreWriter::commit_latency_histogram() const {
  std::lock_guard lock(m_latency_mutex);
  return m_latency_histogram;
}

void StoreWriter::write_status_if_due() {
  if (!m_options.status_hook) {
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (now - m_last_status < m_options.status_interval) {
    return;
  }
  m_last_status = now;
  try {
    db::Transaction txn(m_conn->db);
    m_options.status_hook(m_conn->db);
    txn.commit();
  } catch (const db::SqliteError& e) {
    // Status rows are a convenience: a busy database only delays them.
    if (!e.is_busy()) {
      spdlog::warn("store: cannot write status: {}", e.what());
    }
  }
}

void StoreWriter::rollback() {
  drop_transaction();
  m_failed_commits.fetch_add(1);
}

void StoreWriter::drop_transaction() {
  if (m_in_transaction) {
    try {
      m_conn->db.exec("ROLLBACK");
    } catch (const db::SqliteError& e) {
      spdlog::debug("store: rollback: {}", e.what());  // SQLite may have rolled back already
    }
  }
  m_in_transaction = false;
  m_written = 0;
  m_rows_in_transaction = 0;
  m_conn->rows.forget_erased();  // the batches are written again
}

StoreWriter::FileCheck StoreWriter::check_database_file() {
  m_next_file_check = std::chrono::steady_clock::now() + k_file_check_interval;
  if (!m_files.main) {
    return FileCheck::in_place;  // nothing to compare with
  }
  const std::string& path = m_conn->db.path();
  std::error_code error;
  const std::optional<db::FileIdentity> found = db::file_identity(path, error);
  // Any other stat() error (a directory made unreadable) is no evidence
  // that the file went away: keep writing, as before.
  if (found == m_files.main || (!found && error != std::errc::no_such_file_or_directory)) {
    return FileCheck::in_place;
  }
  if (!m_moved || m_moved_to != found) {
    if (found) {
      spdlog::error("store: database '{}' was replaced by another file while trace2d was running; sessions "
                    "already stored in the replaced file are no longer there",
                    path);
    } else {
      spdlog::error("store: database '{}' was removed (or replaced) while trace2d was running; recreating it "
                    "there: sessions already stored in the removed file are gone, everything from now on goes "
                    "to the new file",
                    path);
    }
    m_moved = true;
    m_moved_to = found;
    m_recreate_failure_logged = false;
  }
  // The open transaction belongs to the old file: its batches are still
  // pending and are written again into the new one.
  drop_transaction();
  if (found && found == m_refused) {
    return FileCheck::unusable;
  }
  return recreate_database(found) ? FileCheck::recreated : FileCheck::unusable;
}

std::optional<std::string> StoreWriter::refuse_replacement(const std::string& path) {
  try {
    db::Database probe(path, db::OpenMode::read_only);
    if (probe.query_int("SELECT count(*) FROM sqlite_master").value_or(0) == 0) {
      return std::nullopt;  // an empty file or database
    }
    if (probe.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sessions'")
            .value_or(0) == 0) {
      return "it is not a trace2d database";
    }
    if (probe.query_int("SELECT EXISTS (SELECT 1 FROM sessions)").value_or(0) != 0) {
      return "it holds sessions of its own, whose ids would clash with this run's";
    }
    return std::nullopt;
  } catch (const db::SqliteError& e) {
    if (e.is_busy()) {
      throw;  // only locked for now: look again on the next attempt
    }
    return e.what();
  }
}

bool StoreWriter::write_names(db::Database& db) const {
  if (m_options.names == nullptr) {
    return true;
  }
  db::Transaction txn(db);
  db::Statement insert = db.prepare("INSERT OR IGNORE INTO names (id, text) VALUES (?, ?)");
  db::Statement same = db.prepare("SELECT count(*) FROM names WHERE id = ? AND text = ?");
  for (const auto& [id, text] : m_options.names->snapshot()) {
    insert.bind_int(1, id);
    insert.bind_text(2, text);
    insert.run();
    if (db.changes() > 0) {
      continue;
    }
    same.bind_int(1, id);
    same.bind_text(2, text);
    const bool present = same.step() && same.column_int(0) == 1;
    same.reset();
    if (!present) {
      return false;  // rolled back by txn
    }
  }
  txn.commit();
  return true;
}

bool StoreWriter::recreate_database(const std::optional<db::FileIdentity>& found) {
  const std::string path = m_conn->db.path();
  // What the old file's WAL holds goes into the old file, best effort: if it
  // was moved rather than deleted, it stays whole without its WAL.
  try {
    m_conn->db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch (const db::SqliteError& e) {
    spdlog::debug("store: checkpoint of the removed database: {}", e.what());
  }
  // A -wal or -shm of the old file left at the path would be taken for the
  // new file's by SQLite, and corrupt it.
  remove_if_same(path + "-wal", m_files.wal);
  remove_if_same(path + "-shm", m_files.shm);
  m_files.wal.reset();
  m_files.shm.reset();
  try {
    if (found) {
      if (auto why = refuse_replacement(path)) {
        spdlog::error("store: not writing into the file now at '{}' ({}): holding events in memory, up to the "
                      "queue bound, and checking again every second; remove that file to have trace2d create a "
                      "new database there, or restart trace2d to use it",
                      path, *why);
        m_refused = found;
        return false;
      }
    }
    auto fresh = std::make_unique<Connection>(db::open_for_writing(path), m_options.retention);
    if (!write_names(fresh->db)) {
      spdlog::error("store: not writing into the database now at '{}': its names table gives other ids to this "
                    "run's names; holding events in memory and checking again every second; remove that file to "
                    "have trace2d create a new database there, or restart trace2d to use it",
                    path);
      std::error_code error;
      m_refused = db::file_identity(path, error);
      return false;
    }
    m_pruned_before += m_conn->retention.sessions_deleted();
    m_conn = std::move(fresh);
  } catch (const db::SqliteError& e) {
    if (!m_recreate_failure_logged) {
      spdlog::error("store: cannot create a new database at '{}', holding events in memory and retrying: {}", path,
                    e.what());
      m_recreate_failure_logged = true;
    }
    return false;
  }
  m_files = db::identify_database_files(path);
  m_next_retention = {};
  m_moved = false;
  m_moved_to.reset();
  m_refused.reset();
  m_database_recreated.fetch_add(1);
  spdlog::info("store: writing to the new database at '{}'", path);
  return true;
}

void StoreWriter::run() {
  using clock = std::chrono::steady_clock;
  auto backoff = std::chrono::milliseconds(0);
  bool input_open = true;
  while (true) {
    m_heartbeat.store(clock::now().time_since_epoch().count());
    // Wait for input, but never past the moment the open transaction is due.
    auto wait = std::chrono::milliseconds(200);
    if (m_in_transaction) {
      // Group commit: the transaction closes once the input has been quiet
      // for `idle_commit_gap` (nobody else waits to join it), or at the
      // interval under a steady load, whichever comes first.
      const auto due = std::min(m_transaction_started + m_options.commit_interval,
                                m_last_input + m_options.idle_commit_gap);
      wait = std::max(std::chrono::milliseconds(0),
                      std::chrono::ceil<std::chrono::milliseconds>(due - clock::now()));
    }
    if (backoff.count() > 0) {
      wait = backoff;
    } else if (m_conn->retention.enabled() && !m_in_transaction) {
      wait = std::min(wait, std::max(std::chrono::milliseconds(1),
                                     std::chrono::duration_cast<std::chrono::milliseconds>(
                                         m_next_retention - clock::now())));
    }
    const std::size_t held = m_pending.size();
    if (input_open) {
      input_open = m_input.pop_all(m_pending, std::min(wait, m_options.status_interval));
    } else if (backoff.count() > 0) {
      std::this_thread::sleep_for(backoff);
    }
    // Idle, the file is checked once a second; before each retry too, since
    // a database that fails because its file is gone must be recreated, not
    // retried. (Commits check it themselves.)
    bool usable = true;
    if (!m_in_transaction && (backoff.count() > 0 || clock::now() >= m_next_file_check)) {
      usable = check_database_file() != FileCheck::unusable;
    }
    // Status and retention go to the database in use, not to one whose file
    // is gone.
    if (usable && !m_moved && !m_in_transaction && backoff.count() == 0) {
      write_status_if_due();
      maintain();
    }
    if (!input_open && m_pending.empty()) {
      break;
    }
    if (m_pending.empty()) {
      continue;
    }

    bool ok = false;
    if (usable) {
      ok = write_pending();
      // Quiet is counted from the end of writing what came: under load the
      // next batch arrives within the gap, however long the write took.
      if (m_pending.size() != held) {
        m_last_input = clock::now();
      }
    } else {
      rollback();  // nothing open: counts the failed attempt
    }
    // A batch that finishes trace files is committed at once: git may be
    // waiting for room in its trace directory.
    const bool urgent = std::any_of(m_pending.begin(), m_pending.end(),
                                    [](const WriteBatch& b) { return !b.remove_after_commit.empty(); });
    // Memory is released only by a commit: when half the budget is held,
    // commit now rather than let the readers stall until the interval ends.
    const bool memory_pressed = m_budget.used() >= m_budget.limit() / 2;
    const auto now = clock::now();
    const bool due = m_in_transaction &&
                     (!input_open || urgent || memory_pressed ||
                      m_rows_in_transaction >= m_options.max_rows_per_transaction ||
                      now - m_last_input >= m_options.idle_commit_gap ||
                      now - m_transaction_started >= m_options.commit_interval);
    if (ok && due) {
      ok = commit();
      if (ok) {
        backoff = std::chrono::milliseconds(0);
      }
    }
    if (ok) {
      // Rows written into an open transaction prove nothing (SQLite holds
      // them in its cache): only a commit ends the back-off, so a full disk
      // is retried at most once a second, not every few milliseconds.
      continue;
    }
    backoff = std::min(m_options.max_retry_backoff, std::max(std::chrono::milliseconds(5), backoff * 2));
    if (!input_open && m_stop_retrying.load()) {
      std::uint64_t lost = 0;
      for (const WriteBatch& batch : m_pending) {
        lost += batch.events.size();
      }
      m_abandoned_events.fetch_add(lost);
      spdlog::error("store: giving up on {} events that could not be written", lost);
      break;
    }
  }
  m_last_status = {};
  write_status_if_due();  // the final counters
}

}  // namespace trace2d::store
