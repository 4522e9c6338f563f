#include "daemon/store/store_writer.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "proto/timestamp.hpp"

namespace trace2d::store {

StoreWriter::StoreWriter(Database db, pipeline::WorkQueue<WriteBatch>& input,
                         pipeline::MemoryBudget& budget, Options options)
    : m_db(std::move(db)),
      m_rows(m_db),
      m_retention(m_db, options.retention),
      m_input(input),
      m_budget(budget),
      m_options(options) {}

void StoreWriter::maintain() {
  const auto now = std::chrono::steady_clock::now();
  if (!m_retention.enabled() || m_in_transaction || now < m_next_retention || !m_input.empty()) {
    return;
  }
  try {
    const bool more = m_retention.step();
    m_sessions_pruned.store(m_retention.sessions_deleted());
    // While there is more to prune, a step every 20 ms between batches;
    // otherwise look again in five seconds (two indexed queries).
    m_next_retention = now + (more ? std::chrono::milliseconds(20) : std::chrono::milliseconds(5000));
  } catch (const SqliteError& e) {
    if (!e.is_busy()) {
      spdlog::warn("retention: {}", e.what());
    }
    m_next_retention = now + std::chrono::seconds(1);
  }
}

bool StoreWriter::write_pending() {
  try {
    if (!m_in_transaction) {
      m_db.exec("BEGIN IMMEDIATE");
      m_in_transaction = true;
      m_transaction_started = std::chrono::steady_clock::now();
    }
    for (; m_written < m_pending.size(); ++m_written) {
      m_rows.write(m_pending[m_written]);
      m_rows_in_transaction += m_pending[m_written].row_count();
    }
    return true;
  } catch (const SqliteError& e) {
    if (!e.is_busy()) {
      spdlog::error("store: write failed, will retry: {}", e.what());
    }
    rollback();
    return false;
  }
}

bool StoreWriter::commit() {
  try {
    m_db.exec("COMMIT");
  } catch (const SqliteError& e) {
    if (!e.is_busy()) {
      spdlog::error("store: commit failed, will retry: {}", e.what());
    }
    rollback();
    return false;
  }
  m_in_transaction = false;
  after_commit(proto::unix_now_us());
  return true;
}

void StoreWriter::after_commit(std::int64_t now_us) {
  std::size_t bytes = 0;
  std::uint64_t events = 0;
  {
    std::lock_guard lock(m_latency_mutex);
    for (const WriteBatch& batch : m_pending) {
      bytes += batch.memory_bytes();
      events += batch.events.size();
      if (batch.oldest_received_us > 0) {
        m_latencies_ms[m_latency_count++ % m_latencies_ms.size()] =
            static_cast<double>(now_us - batch.oldest_received_us) / 1000.0;
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
  m_committed_batch.store(m_pending.back().number);
  m_committed_events.fetch_add(events);
  m_budget.release(bytes);
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
    Transaction txn(m_db);
    m_options.status_hook(m_db);
    txn.commit();
  } catch (const SqliteError& e) {
    // Status rows are a convenience: a busy database only delays them.
    if (!e.is_busy()) {
      spdlog::warn("store: cannot write status: {}", e.what());
    }
  }
}

void StoreWriter::rollback() {
  if (m_in_transaction) {
    try {
      m_db.exec("ROLLBACK");
    } catch (const SqliteError& e) {
      spdlog::debug("store: rollback: {}", e.what());  // SQLite may have rolled back already
    }
  }
  m_in_transaction = false;
  m_written = 0;
  m_rows_in_transaction = 0;
  m_failed_commits.fetch_add(1);
}

void StoreWriter::run() {
  using clock = std::chrono::steady_clock;
  auto backoff = std::chrono::milliseconds(0);
  bool input_open = true;
  bool failing_logged = false;
  while (true) {
    m_heartbeat.store(clock::now().time_since_epoch().count());
    // Wait for input, but never past the moment the open transaction is due.
    auto wait = std::chrono::milliseconds(200);
    if (m_in_transaction) {
      const auto due = m_transaction_started + m_options.commit_interval;
      wait = std::max(std::chrono::milliseconds(0),
                      std::chrono::duration_cast<std::chrono::milliseconds>(due - clock::now()));
    }
    if (backoff.count() > 0) {
      wait = backoff;
    } else if (m_retention.enabled() && !m_in_transaction) {
      wait = std::min(wait, std::max(std::chrono::milliseconds(1),
                                     std::chrono::duration_cast<std::chrono::milliseconds>(
                                         m_next_retention - clock::now())));
    }
    if (input_open) {
      input_open = m_input.pop_all(m_pending, std::min(wait, m_options.status_interval));
    } else if (backoff.count() > 0) {
      std::this_thread::sleep_for(backoff);
    }
    if (!m_in_transaction && backoff.count() == 0) {
      write_status_if_due();
      maintain();
    }
    if (!input_open && m_pending.empty()) {
      break;
    }
    if (m_pending.empty()) {
      continue;
    }

    bool ok = write_pending();
    // A batch that finishes trace files is committed at once: git may be
    // waiting for room in its trace directory.
    const bool urgent = std::any_of(m_pending.begin(), m_pending.end(),
                                    [](const WriteBatch& b) { return !b.remove_after_commit.empty(); });
    // Memory is released only by a commit: when half the budget is held,
    // commit now rather than let the readers stall until the interval ends.
    const bool memory_pressed = m_budget.used() >= m_budget.limit() / 2;
    const bool due = m_in_transaction &&
                     (!input_open || urgent || memory_pressed ||
                      m_rows_in_transaction >= m_options.max_rows_per_transaction ||
                      clock::now() - m_transaction_started >= m_options.commit_interval);
    if (ok && due) {
      ok = commit();
    }
    if (ok) {
      if (failing_logged) {
        spdlog::info("store: writing again");
        failing_logged = false;
      }
      backoff = std::chrono::milliseconds(0);
      continue;
    }
    if (!failing_logged) {
      spdlog::warn("store: database busy or failing; holding {} batches in memory and retrying",
                   m_pending.size());
      failing_logged = true;
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
