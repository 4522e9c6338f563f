#include "daemon/store/database_file_guard.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace trace2d::store {
namespace {

// A stat() per look: cheap next to a transaction, and seconds are short
// next to how long a removed database would otherwise swallow commits.
constexpr std::chrono::seconds k_check_interval{1};

// Removes `path` if it is still the file `identity` names.
void remove_if_same(const std::string& path, const std::optional<db::FileIdentity>& identity) {
  std::error_code error;
  if (identity && db::file_identity(path, error) == identity && ::unlink(path.c_str()) != 0 && errno != ENOENT) {
    spdlog::warn("store: cannot remove '{}': {}", path, std::strerror(errno));
  }
}

}  // namespace

DatabaseFileGuard::DatabaseFileGuard(const db::Database& db, const NameTable* names)
    : m_names(names),
      m_files(db::identify_database_files(db.path())),
      m_next_check(std::chrono::steady_clock::now() + k_check_interval) {}

bool DatabaseFileGuard::in_place(const db::Database& db) {
  m_next_check = std::chrono::steady_clock::now() + k_check_interval;
  if (!m_files.main) {
    return true;  // nothing to compare with
  }
  const std::string& path = db.path();
  std::error_code error;
  m_found = db::file_identity(path, error);
  // Any other stat() error (a directory made unreadable) is no evidence
  // that the file went away: keep writing, as before.
  if (m_found == m_files.main || (!m_found && error != std::errc::no_such_file_or_directory)) {
    return true;
  }
  if (!m_moved || m_moved_to != m_found) {
    if (m_found) {
      spdlog::error(
          "store: database '{}' was replaced by another file while trace2d was running; sessions "
          "already stored in the replaced file are no longer there",
          path);
    } else {
      spdlog::error(
          "store: database '{}' was removed (or replaced) while trace2d was running; recreating it "
          "there: sessions already stored in the removed file are gone, everything from now on goes "
          "to the new file",
          path);
    }
    m_moved = true;
    m_moved_to = m_found;
    m_failure_logged = false;
  }
  return false;
}

std::optional<std::string> DatabaseFileGuard::refuse_replacement(const std::string& path) {
  try {
    db::Database probe(path, db::OpenMode::read_only);
    if (probe.query_int("SELECT count(*) FROM sqlite_master").value_or(0) == 0) {
      return std::nullopt;  // an empty file or database
    }
    if (probe.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sessions'").value_or(0) ==
        0) {
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

bool DatabaseFileGuard::write_names(db::Database& db) const {
  if (m_names == nullptr) {
    return true;
  }
  db::Transaction txn(db);
  db::Statement insert = db.prepare("INSERT OR IGNORE INTO names (id, text) VALUES (?, ?)");
  db::Statement same = db.prepare("SELECT count(*) FROM names WHERE id = ? AND text = ?");
  for (const auto& [id, text] : m_names->snapshot()) {
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

std::optional<db::Database> DatabaseFileGuard::open_replacement(db::Database& old) {
  if (m_found && m_found == m_refused) {
    return std::nullopt;
  }
  const std::string path = old.path();
  // What the old file's WAL holds goes into the old file, best effort: if it
  // was moved rather than deleted, it stays whole without its WAL.
  try {
    old.exec("PRAGMA wal_checkpoint(PASSIVE)");
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
    if (m_found) {
      if (auto why = refuse_replacement(path)) {
        spdlog::error(
            "store: not writing into the file now at '{}' ({}): holding events in memory, up to the "
            "queue bound, and checking again every second; remove that file to have trace2d create a "
            "new database there, or restart trace2d to use it",
            path, *why);
        m_refused = m_found;
        return std::nullopt;
      }
    }
    db::Database fresh = db::open_for_writing(path);
    if (!write_names(fresh)) {
      spdlog::error(
          "store: not writing into the database now at '{}': its names table gives other ids to this "
          "run's names; holding events in memory and checking again every second; remove that file to "
          "have trace2d create a new database there, or restart trace2d to use it",
          path);
      std::error_code error;
      m_refused = db::file_identity(path, error);
      return std::nullopt;
    }
    return fresh;
  } catch (const db::SqliteError& e) {
    if (!m_failure_logged) {
      spdlog::error("store: cannot create a new database at '{}', holding events in memory and retrying: {}", path,
                    e.what());
      m_failure_logged = true;
    }
    return std::nullopt;
  }
}

void DatabaseFileGuard::replaced(const db::Database& db) {
  m_files = db::identify_database_files(db.path());
  m_moved = false;
  m_moved_to.reset();
  m_refused.reset();
  m_failure_logged = false;
  spdlog::info("store: writing to the new database at '{}'", db.path());
}

}  // namespace trace2d::store
