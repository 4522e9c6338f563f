#include "daemon/store/store_writer.hpp"

#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "proto/timestamp.hpp"

namespace trace2d::store {

StoreWriter::StoreWriter(db::Database db, ingest::WorkQueue<WriteBatch>& input, ingest::MemoryBudget& budget,
                         Options options)
    : m_conn(std::make_unique<Connection>(std::move(db), options.retention)),
      m_file_guard(m_conn->db, options.names),
      m_input(input),
      m_budget(budget),
      m_options(std::move(options)) {}

void StoreWriter::maintain() {
  if (m_in_transaction) {
    return;
  }
  m_retention_clock.maintain(m_conn->retention, !m_input.empty());
  const Retention& retention = m_conn->retention;
  const RetentionDeleted deleted{m_deleted_before.sessions + retention.sessions_deleted(),
                                 m_deleted_before.events + retention.events_deleted(),
                                 m_deleted_before.rejects + retention.rejects_deleted()};
  m_sessions_deleted.store(deleted.sessions);
  m_events_deleted.store(deleted.events);
  m_rejects_deleted.store(deleted.rejects);
  // What retention deletes is said, not silent: the first deletion at once,
  // then at most once a minute.
  const auto now = std::chrono::steady_clock::now();
  const bool more = deleted.sessions > m_deleted_logged.sessions || deleted.rejects > m_deleted_logged.rejects;
  if (more && (m_deleted_logged.sessions + m_deleted_logged.rejects == 0 ||
               now - m_deletions_logged >= std::chrono::minutes(1))) {
    spdlog::info(
        "retention: deleted {} sessions ({} events) and {} rejects, older than retention.max_age or over "
        "retention.max_db_bytes (the sender holding the most first); {} sessions since start",
        deleted.sessions - m_deleted_logged.sessions, deleted.events - m_deleted_logged.events,
        deleted.rejects - m_deleted_logged.rejects, deleted.sessions);
    m_deleted_logged = deleted;
    m_deletions_logged = now;
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
  m_last_commit = std::chrono::steady_clock::now();
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
  for (const WriteBatch& batch : m_pending) {
    bytes += batch.memory_bytes();
    charged_to_uids += batch.charged_to_uids();
    events += batch.events.size();
    if (batch.oldest_received_us > 0) {
      m_latency.record(static_cast<double>(now_us - batch.oldest_received_us) / 1000.0);
    }
  }
  // Finished trace files: their last lines are committed now, so removing
  // them can no longer lose anything.
  for (const WriteBatch& batch : m_pending) {
    for (const auto& [path, size] : batch.remove_after_commit) {
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) > size) {
        continue;  // appended to since: kept, and read on
      }
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
  m_retention_clock.committed(bytes);
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
    m_used_bytes.store(m_conn->retention.used_bytes());
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
  if (m_file_guard.in_place(m_conn->db)) {
    return FileCheck::in_place;
  }
  // The open transaction belongs to the old file: its batches are still
  // pending and are written again into the new one.
  drop_transaction();
  std::optional<db::Database> fresh = m_file_guard.open_replacement(m_conn->db);
  if (!fresh) {
    return FileCheck::unusable;
  }
  try {
    auto connection = std::make_unique<Connection>(std::move(*fresh), m_options.retention);
    m_deleted_before.sessions += m_conn->retention.sessions_deleted();
    m_deleted_before.events += m_conn->retention.events_deleted();
    m_deleted_before.rejects += m_conn->retention.rejects_deleted();
    m_conn = std::move(connection);
  } catch (const db::SqliteError& e) {
    if (!m_connection_failure_logged) {
      spdlog::error("store: cannot write to the new database at '{}', holding events in memory and retrying: {}",
                    m_conn->db.path(), e.what());
      m_connection_failure_logged = true;
    }
    return FileCheck::unusable;
  }
  m_connection_failure_logged = false;
  m_file_guard.replaced(m_conn->db);
  m_retention_clock.restart();
  m_database_recreated.fetch_add(1);
  return FileCheck::recreated;
}

void StoreWriter::run() {
  using clock = std::chrono::steady_clock;
  auto backoff = std::chrono::milliseconds(0);
  bool input_open = true;
  while (true) {
    m_heartbeat.store(clock::now().time_since_epoch().count());
    // Wait for input, but never past the moment the open transaction is due.
    // Idle, when the file check is due (once a second, the heartbeat's
    // pace too): every other wake-up of an idle service is CPU and power
    // for nothing.
    auto wait = std::clamp(std::chrono::ceil<std::chrono::milliseconds>(m_file_guard.next_check() - clock::now()),
                           std::chrono::milliseconds(1), std::chrono::milliseconds(1000));
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
      wait =
          std::min(wait, std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                                    m_retention_clock.next() - clock::now())));
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
    if (!m_in_transaction && (backoff.count() > 0 || m_file_guard.due())) {
      usable = check_database_file() != FileCheck::unusable;
    }
    // Status and retention go to the database in use, not to one whose file
    // is gone.
    if (usable && !m_file_guard.moved() && !m_in_transaction && backoff.count() == 0) {
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
    // So is one that ends a process, when nothing else waits to join the
    // transaction: its user may ask about it the moment git returns
    // (`git status; trace2ctl sessions --last`), and the 2 ms of quiet would
    // often lose that race. At most one such commit per quiet gap, as
    // before: connections that end one after the other (anyone may open
    // them) cannot make the writer commit more often than that.
    const auto now = clock::now();
    const bool urgent =
        std::any_of(m_pending.begin(), m_pending.end(),
                    [](const WriteBatch& b) { return !b.remove_after_commit.empty(); }) ||
        (m_input.empty() && now - m_last_commit >= m_options.idle_commit_gap &&
         std::any_of(m_pending.begin(), m_pending.end(), [](const WriteBatch& b) { return b.ends_channel; }));
    // Memory is released only by a commit: when half the budget is held,
    // commit now rather than let the readers stall until the interval ends.
    const bool memory_pressed = m_budget.used() >= m_budget.limit() / 2;
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
