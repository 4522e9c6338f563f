// trace2ctl against databases that are missing, foreign, or being written.

#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "ctl/query/database.hpp"
#include "db/sqlite.hpp"
#include "tests/ctl/sample_database.hpp"
#include "trace2d/version.hpp"

namespace trace2d::test {
namespace {

TEST(Trace2ctlDatabase, MissingDatabaseIsReportedAndNotCreated) {
  TempDir dir;
  const std::string path = dir.file("absent.db");
  for (const char* command : {"sessions", "show", "sql"}) {
    std::vector<std::string> args{"--db", path, command};
    if (std::string(command) != "sessions") {
      args.emplace_back("x");
    }
    const ProcessResult result = run_ctl(args);
    EXPECT_EQ(result.exit_code, 1) << command;
    EXPECT_EQ(result.out, "");
    EXPECT_NE(result.err.find("database '" + path + "' not found"), std::string::npos)
        << result.err;
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(Trace2ctlDatabase, DefaultsToTheDaemonsDatabasePath) {
  TempDir dir;
  // Non-root users get the XDG state directory, root the system path.
  const std::string expected = ::geteuid() == 0 ? std::string("/var/lib/trace2d/trace2d.db")
                                                : dir.file("trace2d/trace2d.db");
  if (std::filesystem::exists(expected)) {
    GTEST_SKIP() << expected << " exists on this machine";
  }
  const ProcessResult result = run_ctl({"sessions"}, {{"XDG_STATE_HOME", dir.path().string()}});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("database '" + expected + "' not found"), std::string::npos)
      << result.err;
}

TEST(Trace2ctlDatabase, RefusesADatabaseWithoutTrace2dsSchema) {
  TempDir dir;
  const std::string path = dir.file("other.db");
  {
    db::Database other(path, db::OpenMode::read_write_create);
    other.exec("CREATE TABLE sessions (sid TEXT)");
  }
  const ProcessResult result = run_ctl({"--db", path, "sessions"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("'" + path + "' is not a trace2d database"), std::string::npos)
      << result.err;
}

TEST(Trace2ctlDatabase, RefusesAFileThatIsNotSqlite) {
  TempDir dir;
  const std::string path = dir.file("notes.txt");
  write_file(path, std::string(4096, 'z'));
  const ProcessResult result = run_ctl({"--db", path, "sql", "SELECT 1"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("'" + path + "' is not an SQLite database"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("SELECT"), std::string::npos) << "no internal SQL\n" << result.err;
  EXPECT_EQ(read_file(path), std::string(4096, 'z'));
}

TEST(Trace2ctlDatabase, AShortTextFileIsNotSqliteEither) {
  TempDir dir;
  const std::string path = dir.file("workload.sh");
  write_file(path, "#!/bin/sh\ngit status\n");
  const ProcessResult result = run_ctl({"--db", path, "sessions"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "trace2ctl: '" + path +
                            "' is not an SQLite database (it does not start with SQLite's file header); --db must "
                            "name the database trace2d writes\n");
}

TEST(Trace2ctlDatabase, AnSqliteDatabaseOfAnotherProgramIsNamedSo) {
  TempDir dir;
  const std::string path = dir.file("other.db");
  {
    db::Database other(path, db::OpenMode::read_write_create);
    other.exec("CREATE TABLE t (x)");
  }
  const ProcessResult result = run_ctl({"--db", path, "sessions"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("an SQLite database without trace2d's tables"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("SELECT"), std::string::npos) << result.err;
}

TEST(Trace2ctlDatabase, AnUnreadableShmIsNamedAsTheCause) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root reads every file";
  }
  SampleDatabase db;
  db.writer().exec("BEGIN IMMEDIATE");  // keeps the -wal and -shm in place
  const std::string shm = db.path() + "-shm";
  ASSERT_TRUE(std::filesystem::exists(shm));
  std::filesystem::permissions(shm, std::filesystem::perms::owner_write);
  const ProcessResult result = run_ctl({"--db", db.path(), "sessions"});
  std::filesystem::permissions(shm, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  db.writer().exec("ROLLBACK");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("cannot read '" + shm + "'"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("SELECT"), std::string::npos) << result.err;
}

TEST(Trace2ctlFlags, BadNumbersGetAReadableMessage) {
  SampleDatabase db;
  for (const auto& [flag, value, expected] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--limit", "-1", "'-1' is not a whole number of 0 or more"},
           {"--limit", "1.5", "'1.5' is not a whole number of 0 or more"},
           {"--limit", "many", "'many' is not a whole number of 0 or more"}}) {
    const ProcessResult result = run_ctl({"--db", db.path(), "sessions", flag, value});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find(expected), std::string::npos) << result.err;
    EXPECT_LT(result.err.size(), 200u) << result.err;
  }
  const ProcessResult timeout = run_ctl({"--db", db.path(), "--timeout", "-1", "sessions"});
  EXPECT_EQ(timeout.exit_code, 2);
  EXPECT_NE(timeout.err.find("'-1' is not a number of seconds from 0 to 31622400"), std::string::npos)
      << timeout.err;
}

TEST(Trace2ctlDatabase, ReadsWhileAWriterHoldsAnOpenTransaction) {
  SampleDatabase db;
  // As a live daemon does: a write transaction in progress, WAL mode.
  db.writer().exec("BEGIN IMMEDIATE");
  db.insert_session(6, "sid-uncommitted", "push", "running", db.time_ago(0), db.time_ago(0));
  ASSERT_TRUE(std::filesystem::exists(db.path() + "-wal"));

  ProcessResult result = run_ctl({"--db", db.path(), "sessions"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_LT(result.seconds, 4.0) << "the reader must not wait for the writer";
  EXPECT_EQ(result.out.find("sid-uncommitted"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("sid-tie"), std::string::npos) << result.out;

  db.writer().exec("COMMIT");
  result = run_ctl({"--db", db.path(), "show", "sid-uncommitted"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("status: running"), std::string::npos) << result.out;
}

TEST(Trace2ctlDatabase, ReadsAfterTheWriterClosed) {
  SampleDatabase db;
  const ProcessResult before = run_ctl({"--db", db.path(), "sessions", "--limit", "0"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  db.close_writer();
  ASSERT_FALSE(std::filesystem::exists(db.path() + "-wal"));
  // The reader must cope without the writer's -shm (it may create its own).
  const ProcessResult after = run_ctl({"--db", db.path(), "sessions", "--limit", "0"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  EXPECT_EQ(split_lines(after.out).size(), 7u);
}

TEST(Trace2ctlCli, VersionHelpAndUsageErrors) {
  ProcessResult result = run_ctl({"--version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, std::string("trace2ctl ") + k_version + "\n");

  result = run_ctl({"--help"});
  EXPECT_EQ(result.exit_code, 0);
  for (const char* word : {"--db", "--json", "sessions", "show", "sql"}) {
    EXPECT_NE(result.out.find(word), std::string::npos) << word << " in\n" << result.out;
  }

  result = run_ctl({});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("a command is required"), std::string::npos) << result.err;

  result = run_ctl({"sessions", "show", "sid-x"});
  EXPECT_EQ(result.exit_code, 2) << "one command at a time";

  result = run_ctl({"frobnicate"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("frobnicate"), std::string::npos) << result.err;

  result = run_ctl({"sessions", "--no-such-flag"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--no-such-flag"), std::string::npos) << result.err;
}

// The time limit is the connection's, so it holds for every command's
// queries, not only `sql`'s.
TEST(Trace2ctlDatabase, EveryQueryOfTheConnectionStopsAtItsTimeLimit) {
  SampleDatabase db;
  db::Database limited = ctl::open_database(db.path(), std::chrono::milliseconds(200));
  const auto started = std::chrono::steady_clock::now();
  try {
    (void)limited.query_int("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c");
    FAIL() << "the endless query ended";
  } catch (const db::SqliteError& e) {
    EXPECT_TRUE(ctl::is_query_timeout(e)) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));

  db::Database unlimited = ctl::open_database(db.path(), std::chrono::milliseconds::zero());
  EXPECT_EQ(unlimited.query_int("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)"
                                " SELECT count(*) FROM c"),
            100000);
}

}  // namespace
}  // namespace trace2d::test
