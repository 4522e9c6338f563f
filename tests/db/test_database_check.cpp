// db::check_database_file: each thing a database path can hold gets its own
// words, for a reader and for a writer.

#include "db/database_check.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "db/database_setup.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::db {
namespace {

using Kind = DatabaseFileKind;

void expect(const std::string& path, DatabaseAccess access, Kind kind, const std::string& words) {
  const DatabaseFileCheck check = check_database_file(path, access);
  EXPECT_EQ(check.kind, kind) << path << ": " << check.problem;
  if (words.empty()) {
    EXPECT_TRUE(check.ok()) << check.problem;
  } else {
    EXPECT_NE(check.problem.find(words), std::string::npos) << check.problem;
    EXPECT_NE(check.problem.find(path), std::string::npos) << check.problem;
  }
}

TEST(DatabaseCheck, AbsentAndEmptyAreFineForAWriterOnly) {
  test::TempDir dir;
  expect(dir.file("none.db"), DatabaseAccess::write, Kind::absent, "");
  expect(dir.file("none.db"), DatabaseAccess::read, Kind::absent, "not found");
  test::write_file(dir.file("empty.db"), "");
  expect(dir.file("empty.db"), DatabaseAccess::write, Kind::empty, "");
  expect(dir.file("empty.db"), DatabaseAccess::read, Kind::empty, "is an empty file");
  { Database tables_none(dir.file("sqlite-empty.db"), OpenMode::read_write_create); }
  expect(dir.file("sqlite-empty.db"), DatabaseAccess::write, Kind::empty, "");
}

TEST(DatabaseCheck, ATrace2dDatabaseIsFine) {
  test::TempDir dir;
  { Database db = open_for_writing(dir.file("t.db")); }
  expect(dir.file("t.db"), DatabaseAccess::read, Kind::trace2d, "");
  expect(dir.file("t.db"), DatabaseAccess::write, Kind::trace2d, "");
  // Also while its writer has it open, in WAL mode.
  Database writer = open_for_writing(dir.file("t.db"));
  expect(dir.file("t.db"), DatabaseAccess::read, Kind::trace2d, "");
}

TEST(DatabaseCheck, NotAFile) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("dir.db"));
  expect(dir.file("dir.db"), DatabaseAccess::read, Kind::directory, "is a directory, not a file");
  ASSERT_EQ(::mkfifo(dir.file("fifo.db").c_str(), 0600), 0);
  expect(dir.file("fifo.db"), DatabaseAccess::write, Kind::not_regular, "is not a regular file");
}

TEST(DatabaseCheck, NotSqliteDamagedAndAnotherProgramsSqlite) {
  test::TempDir dir;
  test::write_file(dir.file("text.db"), "#!/bin/sh\necho hello\n");
  expect(dir.file("text.db"), DatabaseAccess::read, Kind::not_sqlite, "is not an SQLite database");
  test::write_file(dir.file("bad.db"), std::string("SQLite format 3\0", 16) + std::string(200, 'x'));
  expect(dir.file("bad.db"), DatabaseAccess::read, Kind::damaged, "SQLite cannot read it");
  {
    Database other(dir.file("other.db"), OpenMode::read_write_create);
    other.exec("CREATE TABLE sessions (x); CREATE TABLE photos (y)");
  }
  expect(dir.file("other.db"), DatabaseAccess::read, Kind::other_sqlite,
         "is an SQLite database, but not trace2d's (it has no table 'schema_version'; its tables: photos, sessions)");
  expect(dir.file("other.db"), DatabaseAccess::write, Kind::other_sqlite, "refusing to add trace2d's tables");
}

TEST(DatabaseCheck, OpenForWritingRefusesWhatIsNotTrace2dsAndChangesNothing) {
  test::TempDir dir;
  {
    Database other(dir.file("other.db"), OpenMode::read_write_create);
    other.exec("CREATE TABLE photos (y)");
  }
  try {
    (void)open_for_writing(dir.file("other.db"));
    FAIL() << "a foreign database was opened for writing";
  } catch (const SqliteError& e) {
    EXPECT_NE(std::string(e.what()).find("not trace2d's"), std::string::npos) << e.what();
  }
  Database other(dir.file("other.db"), OpenMode::read_only);
  EXPECT_EQ(other.query_int("SELECT count(*) FROM sqlite_master"), 1);  // no table of ours added
}

TEST(DatabaseCheck, UnreadableFilesAreNamed) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root reads everything (e2e DatabaseFiles.* runs trace2d as nobody)";
  }
  test::TempDir dir;
  { Database db = open_for_writing(dir.file("t.db")); }
  test::write_file(dir.file("t.db-shm"), "");
  ASSERT_EQ(::chmod(dir.file("t.db-shm").c_str(), 0), 0);
  expect(dir.file("t.db"), DatabaseAccess::read, Kind::unreadable, "SQLite's '" + dir.file("t.db-shm") + "'");
  ASSERT_EQ(::chmod(dir.file("t.db").c_str(), 0), 0);
  expect(dir.file("t.db"), DatabaseAccess::read, Kind::unreadable, "cannot read database");
}

}  // namespace
}  // namespace trace2d::db
