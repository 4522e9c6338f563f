#pragma once
// Whether the database path still names the file the store writes into.
//
// SQLite writes through open descriptors, so a database file removed (or
// replaced) under the writer would go on taking commits that vanish with
// it. The store writer asks before each commit, and at least once a second
// otherwise; when the path names something else, this logs it (once per
// change), and makes the new database the writer goes on with: at the same
// path, holding every name handed out so far (events refer to names by id).
// A file put there that holds other data is refused, and looked at again.

#include <chrono>
#include <optional>
#include <string>

#include "daemon/store/name_table.hpp"
#include "db/database_setup.hpp"
#include "db/sqlite.hpp"

namespace trace2d::store {

class DatabaseFileGuard {
 public:
  // `db`: the database as opened; `names`: the names to write into a new one
  // (nullptr: none to keep).
  DatabaseFileGuard(const db::Database& db, const NameTable* names);

  // Whether a second has gone by since the last look.
  [[nodiscard]] bool due() const { return std::chrono::steady_clock::now() >= m_next_check; }
  [[nodiscard]] std::chrono::steady_clock::time_point next_check() const { return m_next_check; }
  // Whether the path named another file (or none) at the last look.
  [[nodiscard]] bool moved() const { return m_moved; }

  // Looks at the path: true while it names `db`'s file (or cannot be told).
  bool in_place(const db::Database& db);

  // After in_place() said no and the writer dropped what `old` had open:
  // the new database at the path, or nullopt while none can be used (the
  // writer holds its batches and asks again).
  std::optional<db::Database> open_replacement(db::Database& old);
  // The writer writes into `db` now (made by open_replacement()): the path
  // names it again.
  void replaced(const db::Database& db);

 private:
  // Why the file now at `path` must not become this run's database, or
  // nullopt when it may (empty, or a trace2d database without sessions).
  [[nodiscard]] static std::optional<std::string> refuse_replacement(const std::string& path);
  // Writes `m_names` into `db`; false when one of them has another id there.
  [[nodiscard]] bool write_names(db::Database& db) const;

  const NameTable* m_names;
  db::DatabaseFiles m_files;  // what the writer's database is on disk
  std::chrono::steady_clock::time_point m_next_check;
  // While the path does not name it: what it named when last reported
  // (nullopt: nothing), so each change is logged once.
  bool m_moved = false;
  std::optional<db::FileIdentity> m_moved_to;
  std::optional<db::FileIdentity> m_found;  // at the last look
  bool m_failure_logged = false;
  std::optional<db::FileIdentity> m_refused;  // a replacement holding other data
};

}  // namespace trace2d::store
