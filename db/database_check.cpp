#include "db/database_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "db/sqlite.hpp"

namespace trace2d::db {
namespace {

constexpr std::array<char, 16> k_sqlite_header{'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                               'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
// Bytes 18 and 19 of the header: 2 when the database is in WAL mode.
constexpr std::size_t k_write_version_offset = 18;

DatabaseFileCheck problem(DatabaseFileKind kind, std::string text) { return {kind, std::move(text)}; }

std::string in_quotes(const std::string& path) { return "'" + path + "'"; }

// As this process's effective ids see it (access() would use the real ones).
bool may(const std::string& path, int mode) { return ::faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0; }

std::string verb(DatabaseAccess access) { return access == DatabaseAccess::read ? "read" : "write"; }

// SQLite's -wal and -shm: a reader needs them readable (and the -shm
// creatable when missing, for a database in WAL mode), a writer needs them
// writable, or creatable in the directory.
DatabaseFileCheck check_sqlite_files(const std::string& path, DatabaseAccess access, bool wal_mode) {
  const int mode = access == DatabaseAccess::read ? R_OK : R_OK | W_OK;
  std::string directory = std::filesystem::path(path).parent_path().string();
  if (directory.empty()) {
    directory = ".";
  }
  const bool directory_writable = may(directory, W_OK | X_OK);
  for (const char* suffix : {"-wal", "-shm"}) {
    const std::string file = path + suffix;
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) {
      if (!may(file, mode)) {
        return problem(DatabaseFileKind::unreadable,
                       "cannot " + verb(access) + " database " + in_quotes(path) + ": SQLite's " + in_quotes(file) +
                           " beside it is not " + (access == DatabaseAccess::read ? "readable" : "writable") +
                           " by this user: " + std::strerror(errno));
      }
    } else if (errno == ENOENT && (access == DatabaseAccess::write || (wal_mode && suffix[1] == 's')) &&
               !directory_writable) {
      return problem(DatabaseFileKind::unreadable,
                     "cannot " + verb(access) + " database " + in_quotes(path) + ": SQLite needs to create " +
                         in_quotes(file) + " and this user cannot write in " + in_quotes(directory));
    }
  }
  return {};
}

}  // namespace

DatabaseFileCheck check_database_file(const std::string& path, DatabaseAccess access) {
  const bool reading = access == DatabaseAccess::read;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return reading ? problem(DatabaseFileKind::absent, "database " + in_quotes(path) + " not found")
                     : DatabaseFileCheck{DatabaseFileKind::absent, {}};
    }
    return problem(DatabaseFileKind::unreadable,
                   "cannot access database " + in_quotes(path) + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    return problem(DatabaseFileKind::directory, "database " + in_quotes(path) + " is a directory, not a file");
  }
  if (!S_ISREG(st.st_mode)) {
    return problem(DatabaseFileKind::not_regular, "database " + in_quotes(path) + " is not a regular file");
  }
  const int fd = ::open(path.c_str(), (reading ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    return problem(DatabaseFileKind::unreadable,
                   "cannot " + verb(access) + " database " + in_quotes(path) + ": " + std::strerror(errno));
  }
  std::array<char, 100> header{};
  const ssize_t n = ::pread(fd, header.data(), header.size(), 0);
  const int read_error = errno;
  ::close(fd);
  if (n < 0) {
    return problem(DatabaseFileKind::unreadable,
                   "cannot read database " + in_quotes(path) + ": " + std::strerror(read_error));
  }
  if (n == 0) {
    return reading ? problem(DatabaseFileKind::empty, in_quotes(path) +
                                                          " is an empty file, not yet a trace2d database (trace2d "
                                                          "creates its tables when it first opens it)")
                   : DatabaseFileCheck{DatabaseFileKind::empty, {}};
  }
  if (static_cast<std::size_t>(n) < k_sqlite_header.size() ||
      std::memcmp(header.data(), k_sqlite_header.data(), k_sqlite_header.size()) != 0) {
    return problem(DatabaseFileKind::not_sqlite,
                   in_quotes(path) + " is not an SQLite database (nor a trace2d one): it does not start with "
                                  "SQLite's header");
  }
  const bool wal_mode = static_cast<std::size_t>(n) > k_write_version_offset && header[k_write_version_offset] == 2;
  if (DatabaseFileCheck files = check_sqlite_files(path, access, wal_mode); !files.ok()) {
    return files;
  }

  // The file says it is SQLite: what SQLite finds in it.
  try {
    Database db(path, OpenMode::read_only);
    const auto tables = db.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table'").value_or(0);
    if (tables == 0) {
      return reading ? problem(DatabaseFileKind::empty, in_quotes(path) +
                                                            " is an SQLite database without tables, not yet a "
                                                            "trace2d database")
                     : DatabaseFileCheck{DatabaseFileKind::empty, {}};
    }
    if (db.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
            .value_or(0) > 0) {
      return {DatabaseFileKind::trace2d, {}};
    }
    std::string names;
    Statement list = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name LIMIT 6");
    int listed = 0;
    while (list.step()) {
      names += names.empty() ? "" : ", ";
      names += ++listed > 5 ? std::string("...") : std::string(list.column_text(0));
    }
    return problem(DatabaseFileKind::other_sqlite,
                   in_quotes(path) + " is an SQLite database, but not trace2d's (it has no table 'schema_version'; "
                                  "its tables: " +
                       names + ")" +
                       (reading ? std::string() : "; refusing to add trace2d's tables to it"));
  } catch (const SqliteError& e) {
    const int primary = e.code() & 0xFF;
    if (e.is_busy()) {
      return {DatabaseFileKind::trace2d, {}};  // its writer holds it: not ours to judge now
    }
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
      return problem(DatabaseFileKind::damaged,
                     in_quotes(path) + " has SQLite's header but SQLite cannot read it (" +
                         sqlite3_errstr(primary) + "): damaged, or not a database");
    }
    return problem(DatabaseFileKind::unreadable, "cannot " + verb(access) + " database " + in_quotes(path) + ": " +
                                                     sqlite3_errstr(primary));
  }
}

}  // namespace trace2d::db
