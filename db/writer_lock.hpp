#pragma once
// One writer per database. Two writers would each mark the other's running
// sessions incomplete at start-up and hand out the same session ids from
// the same maximum, so every writer (the daemon, `trace2d import`) holds
// this lock, `<database>.lock` beside the database (its path with symlinks
// resolved), for as long as it writes. Readers (trace2ctl, sqlite3) never
// take it.

#include <string>

#include "db/lock_file.hpp"

namespace trace2d::db {

// Another process writes the database; what() names it and its pid.
class DatabaseInUse : public LockFileError {
 public:
  using LockFileError::LockFileError;
};

class WriterLock {
 public:
  // Creates the database's directory if missing and takes the lock without
  // waiting. Throws DatabaseInUse when another writer holds it,
  // LockFileError when the lock file cannot be used.
  explicit WriterLock(const std::string& db_path);

  [[nodiscard]] static std::string lock_path(const std::string& db_path) { return db_path + ".lock"; }
  [[nodiscard]] const std::string& path() const { return m_lock.path(); }

 private:
  LockFile m_lock;
};

}  // namespace trace2d::db
