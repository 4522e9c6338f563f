#pragma once
// A read transaction for commands that run several queries: in WAL mode it
// pins one snapshot, so a live daemon's commits in between cannot make the
// answers disagree (a child counted but its session not yet there).

#include <sqlite3.h>

#include "db/sqlite.hpp"

namespace trace2d::db {

class ReadTransaction {
 public:
  explicit ReadTransaction(db::Database& db) : m_db(db) { m_db.exec("BEGIN"); }
  ~ReadTransaction() {
    // Reads only: ending it can fail only when it never began; nothing to undo.
    sqlite3_exec(m_db.handle(), "COMMIT", nullptr, nullptr, nullptr);
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  db::Database& m_db;
};

}  // namespace trace2d::db
