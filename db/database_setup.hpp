#pragma once
// Opens the daemon's database for writing: refuses a file that is not a
// trace2d database (or an empty one) with check_database_file's words,
// creates it (mode 0640) and its directory, sets the pragmas, applies migrations, and marks sessions left
// `running` by a previous run as `incomplete` (their connections are gone).

#include <sys/types.h>

#include <optional>
#include <string>
#include <system_error>

#include "db/sqlite.hpp"

namespace trace2d::db {

struct SetupReport {
  int migrations_applied = 0;
  std::int64_t sessions_marked_incomplete = 0;
};

[[nodiscard]] Database open_for_writing(const std::string& path, SetupReport* report = nullptr);

// Which file a path names: SQLite writes through descriptors, so a database
// removed or replaced under a running writer is only noticed by comparing
// this with what the path named when it was opened.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

// nullopt with `error` set when stat() fails: std::errc::no_such_file_or_directory
// when nothing is there.
[[nodiscard]] std::optional<FileIdentity> file_identity(const std::string& path, std::error_code& error);

// The database file and the two SQLite keeps beside it in WAL mode.
struct DatabaseFiles {
  std::optional<FileIdentity> main;
  std::optional<FileIdentity> wal;
  std::optional<FileIdentity> shm;
};

// What the files at `path`, `path-wal` and `path-shm` are now (nullopt for
// those that cannot be stat()ed).
[[nodiscard]] DatabaseFiles identify_database_files(const std::string& path);

}  // namespace trace2d::db
