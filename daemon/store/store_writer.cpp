#include "daemon/store/store_writer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

namespace trace2d::store {

StoreWriter::StoreWriter(Database db, pipeline::WorkQueue<WriteBatch>& input,
                         pipeline::MemoryBudget& budget, Options options)
    : m_db(std::move(db)), m_rows(m_db), m_input(input), m_budget(budget), m_options(options) {}

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
  std::size_t bytes = 0;
  std::uint64_t events = 0;
  for (const WriteBatch& batch : m_pending) {
    bytes += batch.memory_bytes();
    events += batch.events.size();
  }
  m_committed_batch.store(m_pending.back().number);
  m_committed_events.fetch_add(events);
  m_budget.release(bytes);
  m_pending.clear();
  m_written = 0;
  m_rows_in_transaction = 0;
  return true;
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
    // Wait for input, but never past the moment the open transaction is due.
    auto wait = std::chrono::milliseconds(200);
    if (m_in_transaction) {
      const auto due = m_transaction_started + m_options.commit_interval;
      wait = std::max(std::chrono::milliseconds(0),
                      std::chrono::duration_cast<std::chrono::milliseconds>(due - clock::now()));
    }
    if (backoff.count() > 0) {
      wait = backoff;
    }
    if (input_open) {
      input_open = m_input.pop_all(m_pending, wait);
    } else if (backoff.count() > 0) {
      std::this_thread::sleep_for(backoff);
    }
    if (!input_open && m_pending.empty()) {
      break;
    }
    if (m_pending.empty()) {
      continue;
    }

    bool ok = write_pending();
    const bool due = m_in_transaction &&
                     (!input_open || m_rows_in_transaction >= m_options.max_rows_per_transaction ||
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
}

}  // namespace trace2d::store
