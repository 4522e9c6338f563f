#include "db/database_setup.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "db/database_check.hpp"
#include "db/schema.hpp"

namespace trace2d::db {
namespace {

void create_file_if_missing(const std::string& path) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) {
      throw SqliteError(SQLITE_CANTOPEN, "cannot create directory '" + p.parent_path().string() +
                                             "': " + ec.message());
    }
  }
  // SQLite gives its -wal and -shm files the database file's mode.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) {
    throw SqliteError(SQLITE_CANTOPEN,
                      "cannot create database '" + path + "': " + std::strerror(errno));
  }
  ::close(fd);
}

}  // namespace

Database open_for_writing(const std::string& path, SetupReport* report) {
  // SQLite's own words for these ("unable to open database file", "file is
  // not a database" on the first statement) say neither which file nor
  // what to do; and a foreign SQLite file would get trace2d's tables added.
  if (const DatabaseFileCheck check = check_database_file(path, DatabaseAccess::write); !check.ok()) {
    throw SqliteError(check.kind == DatabaseFileKind::unreadable ? SQLITE_CANTOPEN : SQLITE_NOTADB, check.problem);
  }
  create_file_if_missing(path);
  Database db(path, OpenMode::read_write_create);
  db.set_busy_timeout(5000);
  if (db.query_int("SELECT count(*) FROM sqlite_master").value_or(0) == 0) {
    // Only possible before the first table, and before WAL writes the header.
    db.exec("PRAGMA auto_vacuum = INCREMENTAL");
  }
  // WAL: readers (trace2ctl, sqlite3) never block the writer, and the writer
  // never blocks them. NORMAL sync in WAL survives a crash of the daemon;
  // only an OS crash can lose the last transactions.
  const auto mode = db.query_text("PRAGMA journal_mode = WAL");
  if (!mode || *mode != "wal") {
    throw SqliteError(SQLITE_ERROR, "cannot switch '" + path + "' to WAL mode");
  }
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA temp_store = MEMORY");
  db.exec("PRAGMA cache_size = -8192");  // KiB
  db.exec("PRAGMA journal_size_limit = 67108864");
  SetupReport local;
  local.migrations_applied = apply_migrations(db);
  db.exec("UPDATE sessions SET status = 'incomplete' WHERE status = 'running'");
  local.sessions_marked_incomplete = db.changes();
  if (report != nullptr) {
    *report = local;
  }
  // trace2d's OTLP exporter writes too (its queue and counters), in
  // transactions of a few milliseconds: waiting that long is cheaper than
  // giving the batch back and retrying it later. A lock held longer (another
  // program) comes back as SQLITE_BUSY, which the writer handles itself
  // without stalling, holding the events in memory meanwhile.
  db.set_busy_timeout(100);
  return db;
}

std::optional<FileIdentity> file_identity(const std::string& path, std::error_code& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = std::error_code(errno, std::generic_category());
    return std::nullopt;
  }
  error.clear();
  return FileIdentity{st.st_dev, st.st_ino};
}

DatabaseFiles identify_database_files(const std::string& path) {
  std::error_code ignored;
  return {file_identity(path, ignored), file_identity(path + "-wal", ignored),
          file_identity(path + "-shm", ignored)};
}

}  // namespace trace2d::db
