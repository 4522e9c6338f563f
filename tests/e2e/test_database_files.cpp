// What trace2d says about a --db that is not a usable trace2d database:
// the real binary, as root and as another user, and the file left as it was.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "db/database_setup.hpp"
#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

ProcessResult run_daemon(const TempDir& dir, const std::string& db, std::optional<RunAs> run_as = std::nullopt,
                         const std::string& socket_dir = "") {
  ProcessSpec spec;
  spec.argv = {TRACE2D_BIN, "--config", "", "--socket", (socket_dir.empty() ? dir.file("t.sock") : socket_dir + "/t.sock"),
               "--dgram-socket", "", "--db", db};
  spec.run_as = run_as;
  return run_process(spec, std::chrono::seconds(20));
}

TEST(DatabaseFiles, NotSqliteAndAnotherProgramsSqliteAreToldApartAndLeftAlone) {
  TempDir dir;
  write_file(dir.file("workload.sh"), "#!/bin/sh\ngit status\n");
  const ProcessResult text = run_daemon(dir, dir.file("workload.sh"));
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.err.find("'" + dir.file("workload.sh") + "' is not an SQLite database"), std::string::npos)
      << text.err;
  EXPECT_EQ(text.err.find("sqlite_master"), std::string::npos) << text.err;  // no internal SQL
  EXPECT_EQ(read_file(dir.file("workload.sh")), "#!/bin/sh\ngit status\n");

  {
    db::Database other(dir.file("photos.db"), db::OpenMode::read_write_create);
    other.exec("CREATE TABLE photos (y)");
  }
  const ProcessResult foreign = run_daemon(dir, dir.file("photos.db"));
  EXPECT_EQ(foreign.exit_code, 1);
  EXPECT_NE(foreign.err.find("is an SQLite database, but not trace2d's"), std::string::npos) << foreign.err;
  EXPECT_EQ(open_db(dir.file("photos.db")).query_int("SELECT count(*) FROM sqlite_master"), 1);
  EXPECT_FALSE(std::filesystem::exists(dir.file("photos.db.lock")));
}

TEST(DatabaseFiles, AnUnwritableShmIsNamed) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to run trace2d as another user";
  }
  TempDir dir;
  const RunAs other = nobody();
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const std::string shared = dir.file("shared");
  const std::string run = dir.file("run");
  std::filesystem::create_directories(shared);
  std::filesystem::create_directories(run);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  ASSERT_EQ(::chown(run.c_str(), other.uid, other.gid), 0);
  ASSERT_EQ(::chmod(run.c_str(), 0700), 0);
  const std::string db = shared + "/t.db";
  { db::Database made = db::open_for_writing(db); }
  ASSERT_EQ(::chmod(db.c_str(), 0666), 0);
  write_file(db + "-shm", "");  // root's, mode 0600 below: SQLite's index, unusable by the other user
  ASSERT_EQ(::chmod((db + "-shm").c_str(), 0600), 0);

  const ProcessResult r = run_daemon(dir, db, other, run);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot write database '" + db + "': SQLite's '" + db +
                       "-shm' beside it is not writable by this user"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace trace2d::test
