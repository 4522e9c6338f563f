// db::LockFile and db::WriterLock: one holder at a time, the holder's pid in
// the refusal, a file left by a dead holder taken over, nothing left behind.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "db/lock_file.hpp"
#include "db/writer_lock.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::db {
namespace {

TEST(LockFile, ASecondClaimIsRefusedWithTheHoldersPid) {
  test::TempDir dir;
  const LockFile first(dir.file("x.lock"));
  // flock() locks belong to an open file description: a second open() in
  // the same process conflicts just as another process would.
  try {
    const LockFile second(dir.file("x.lock"));
    FAIL() << "the second claim succeeded";
  } catch (const LockHeld& held) {
    EXPECT_EQ(held.holder(), ::getpid());
    EXPECT_EQ(held.holder_text(), "pid " + std::to_string(::getpid()));
  }
}

TEST(LockFile, TheFileIsRemovedWhenLetGoAndCanBeTakenAgain) {
  test::TempDir dir;
  {
    const LockFile lock(dir.file("x.lock"));
    EXPECT_TRUE(std::filesystem::exists(dir.file("x.lock")));
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.lock")));
  EXPECT_NO_THROW(LockFile again(dir.file("x.lock")));
}

TEST(LockFile, AFileLeftByADeadHolderIsTakenOver) {
  test::TempDir dir;
  test::write_file(dir.file("x.lock"), "999999999\n");  // nobody holds the flock
  const LockFile lock(dir.file("x.lock"));
  EXPECT_EQ(test::read_file(dir.file("x.lock")).substr(0, std::to_string(::getpid()).size() + 1),
            std::to_string(::getpid()) + "\n");
}

TEST(LockFile, AMovedLockIsMovedNotReleased) {
  test::TempDir dir;
  LockFile first(dir.file("x.lock"));
  LockFile moved(std::move(first));
  EXPECT_TRUE(std::filesystem::exists(dir.file("x.lock")));
  EXPECT_THROW(LockFile third(dir.file("x.lock")), LockHeld);
}

TEST(LockFile, RefusesADirectory) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("x.lock"));
  try {
    const LockFile lock(dir.file("x.lock"));
    FAIL() << "a directory was taken as a lock file";
  } catch (const LockFileError& e) {
    EXPECT_EQ(dynamic_cast<const LockHeld*>(&e), nullptr);
    EXPECT_NE(std::string(e.what()).find("x.lock"), std::string::npos) << e.what();
  }
}

TEST(WriterLock, ASecondWriterIsToldWhoWritesTheDatabase) {
  test::TempDir dir;
  const std::string db = dir.file("sub/dir/t.db");
  const WriterLock first(db);  // creates the directory, as opening the database would
  EXPECT_EQ(first.path(), db + ".lock");
  EXPECT_TRUE(std::filesystem::exists(db + ".lock"));
  try {
    const WriterLock second(db);
    FAIL() << "a second writer was allowed";
  } catch (const DatabaseInUse& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pid " + std::to_string(::getpid())), std::string::npos) << what;
    EXPECT_NE(what.find("'" + db + "'"), std::string::npos) << what;
  }
}

// Through a symlink to the database, or to its directory, the same file:
// the same lock.
TEST(WriterLock, ASecondWriterThroughASymlinkIsRefused) {
  test::TempDir dir;
  const std::string db = dir.file("real/t.db");
  const WriterLock first(db);
  std::filesystem::create_symlink(db, dir.file("link.db"));
  std::filesystem::create_directory_symlink(dir.file("real"), dir.file("linked-dir"));
  for (const std::string& other : {dir.file("link.db"), dir.file("linked-dir/t.db"), dir.file("real/../real/t.db")}) {
    try {
      const WriterLock second(other);
      ADD_FAILURE() << "a second writer was allowed through '" << other << "'";
    } catch (const DatabaseInUse& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("'" + other + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("lock file '" + db + ".lock'"), std::string::npos) << what;
    }
  }
}

TEST(WriterLock, OtherDatabasesAreIndependent) {
  test::TempDir dir;
  const WriterLock first(dir.file("a.db"));
  EXPECT_NO_THROW(WriterLock second(dir.file("b.db")));
}

}  // namespace
}  // namespace trace2d::db
