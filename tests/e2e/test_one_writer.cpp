// One writer per database (db::WriterLock): a second daemon, or an import,
// against a database a daemon is writing is refused with the first one's
// pid and changes nothing in it; a lock left by a killed daemon is taken
// over; a clean exit leaves no lock file behind.

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

namespace fs = std::filesystem;

ProcessResult run_trace2d(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {TRACE2D_BIN, "--config", ""};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  return run_process(spec, std::chrono::seconds(20));
}

std::optional<std::string> status_of(const std::string& db_path, const std::string& sid) {
  db::Database db = open_db(db_path);
  return db.query_text("SELECT status FROM sessions WHERE sid = '" + sid + "'");
}

TEST(OneWriter, ASecondDaemonOnTheSameDatabaseIsRefusedWithThePid) {
  TempDir dir;
  RunningDaemon first(dir);
  SocketClient client(first.socket_path());
  ASSERT_TRUE(client.send(event_line("one-writer-running", "version") + event_line("one-writer-running", "start", 1)));
  ASSERT_TRUE(wait_until([&] { return status_of(first.db_path(), "one-writer-running") == "running"; }));

  // What the issue did: other sockets, the same database.
  const ProcessResult second =
      run_trace2d({"--socket", dir.file("other.sock"), "--dgram-socket", "", "--db", first.db_path()});
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_NE(second.err.find("another trace2d (pid " + std::to_string(first.pid()) + ") is writing database '" +
                            first.db_path() + "'"),
            std::string::npos)
      << second.err;
  EXPECT_FALSE(fs::exists(dir.file("other.sock")));
  // The first daemon's session was left alone, and the first still works.
  EXPECT_EQ(status_of(first.db_path(), "one-writer-running"), "running");
  ASSERT_TRUE(client.send(event_line("one-writer-running", "atexit", 2)));
  client.close();
  EXPECT_TRUE(wait_until([&] { return status_of(first.db_path(), "one-writer-running") == "complete"; }));
  EXPECT_EQ(first.stop().exit_code, 0);
}

// The same file by another name (a symlink, as /var/lib/trace2d often is):
// both daemons ran, and each lost the other's sessions.
TEST(OneWriter, ASecondDaemonOnASymlinkToTheDatabaseIsRefused) {
  TempDir dir;
  RunningDaemon first(dir);
  fs::create_symlink(first.db_path(), dir.file("linked.db"));
  const ProcessResult second =
      run_trace2d({"--socket", dir.file("other.sock"), "--dgram-socket", "", "--db", dir.file("linked.db")});
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_NE(second.err.find("another trace2d (pid " + std::to_string(first.pid()) + ") is writing database '" +
                            dir.file("linked.db") + "'"),
            std::string::npos)
      << second.err;
  EXPECT_FALSE(fs::exists(dir.file("other.sock")));
  EXPECT_EQ(first.stop().exit_code, 0);
}

TEST(OneWriter, AnImportIntoADatabaseADaemonWritesIsRefused) {
  TempDir dir;
  RunningDaemon daemon(dir);
  const fs::path traces = fs::path(TRACE2D_TEST_DATA) / "traces";
  const ProcessResult import = run_trace2d({"import", "--db", daemon.db_path(), traces.string()});
  EXPECT_EQ(import.exit_code, 1) << import.err;
  EXPECT_NE(import.err.find("another trace2d (pid " + std::to_string(daemon.pid()) + ")"), std::string::npos)
      << import.err;
  EXPECT_EQ(open_db(daemon.db_path()).query_int("SELECT count(*) FROM sessions"), 0);
}

TEST(OneWriter, ALockLeftByAKilledDaemonIsTakenOverAndAllLocksGoAtACleanExit) {
  TempDir dir;
  {
    RunningDaemon killed(dir);
    killed.process().signal(SIGKILL);
    (void)killed.process().wait(std::chrono::seconds(10));
  }
  ASSERT_TRUE(fs::exists(dir.file("t.db.lock")));  // what a crash leaves
  RunningDaemon daemon(dir);
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  for (const char* left : {"t.db.lock", "t.sock.lock", "d.sock.lock", "t.sock", "d.sock"}) {
    EXPECT_FALSE(fs::exists(dir.file(left))) << left << " left after a clean exit";
  }
  EXPECT_TRUE(fs::exists(dir.file("t.db")));
}

}  // namespace
}  // namespace trace2d::test
