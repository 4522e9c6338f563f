#pragma once
// What a database path holds, said the way a user can act on: missing, a
// directory, unreadable (the file itself, or SQLite's -wal/-shm beside it),
// not SQLite at all, SQLite but not trace2d's, or trace2d's. SQLite itself
// reports most of these as "unable to open database file" or "file is not
// a database", on whatever statement comes first. Used by the daemon
// before it opens a database for writing and by trace2ctl before it reads
// one; SQLite and POSIX only.

#include <string>

namespace trace2d::db {

enum class DatabaseAccess { read, write };

enum class DatabaseFileKind {
  absent,       // nothing there (a writer creates it)
  empty,        // a file of 0 bytes, or SQLite without a table (a writer fills it)
  trace2d,      // SQLite with trace2d's schema_version table
  directory,
  not_regular,  // a FIFO, socket or device
  unreadable,   // the file, its -wal/-shm or its directory cannot be used by this user
  not_sqlite,   // no SQLite header
  damaged,      // SQLite's header, but SQLite cannot read it
  other_sqlite  // SQLite, with tables, but not trace2d's
};

struct DatabaseFileCheck {
  DatabaseFileKind kind = DatabaseFileKind::absent;
  // A sentence naming the path and what is wrong; "" when nothing is wrong
  // for the access asked about (absent and empty are fine for a writer).
  std::string problem;

  [[nodiscard]] bool ok() const { return problem.empty(); }
};

// Looks at `path` (and SQLite's files beside it) for reading or writing.
// Never creates, changes or locks anything, and never waits for a lock: a
// database busy with its writer counts as trace2d's if it has the table.
[[nodiscard]] DatabaseFileCheck check_database_file(const std::string& path, DatabaseAccess access);

}  // namespace trace2d::db
