// A database held under an exclusive lock must not slow git down: trace2d
// keeps reading into memory and writes everything once the lock is gone.

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(LockedDatabase, GitIsAsFastWhileTheDatabaseIsLocked) {
  constexpr int k_runs = 20;
  TempDir dir;
  RunningDaemon daemon(dir);
  const std::string repo = make_repo(dir, "repo");
  const std::map<std::string, std::string> env = {{"GIT_TRACE2_EVENT", daemon.git_target()}};
  auto time_runs = [&] {
    std::vector<double> durations;
    for (int i = 0; i < k_runs; ++i) {
      const ProcessResult r = run_git(repo, {"status"}, env);
      EXPECT_EQ(r.exit_code, 0);
      durations.push_back(r.seconds);
    }
    return durations;
  };
  const double unlocked = median(time_runs());
  // The first round committed (within the commit interval) before the lock.
  ASSERT_TRUE(wait_until([&] {
    db::Database reader = open_db(daemon.db_path());
    return reader.query_int("SELECT count(*) FROM sessions WHERE status = 'complete'").value_or(0) == k_runs;
  }));

  db::Database locker(daemon.db_path(), db::OpenMode::read_write_create);
  locker.set_busy_timeout(5000);
  locker.exec("BEGIN EXCLUSIVE");
  const auto locked_at = std::chrono::steady_clock::now();
  const double locked = median(time_runs());
  const auto lock_held = std::chrono::steady_clock::now() - locked_at;
  // While locked, nothing of the second round can be committed.
  const long committed_while_locked = [&] {
    db::Database reader = open_db(daemon.db_path());
    return reader.query_int("SELECT count(*) FROM sessions").value_or(0);
  }();
  std::this_thread::sleep_for(std::chrono::seconds(3) - std::min<std::chrono::nanoseconds>(lock_held, std::chrono::seconds(3)));
  locker.exec("COMMIT");

  // The lock costs git nothing measurable (generous noise margin).
  EXPECT_LT(locked, unlocked * 1.5 + 0.010) << "unlocked median " << unlocked << " s, locked " << locked << " s";
  EXPECT_EQ(committed_while_locked, k_runs);

  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE status = 'complete' AND cmd_name = 'status'"),
            2 * k_runs);
  // Every session whole: from version to atexit, counts matching.
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions s WHERE event_count !="
                         " (SELECT count(*) FROM event_store e WHERE e.session = s.id)"),
            0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE event = 'atexit'"), 2 * k_runs);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE event = 'version' AND seq = 0"), 2 * k_runs);
  EXPECT_EQ(db.query_int("SELECT sum(event_count) FROM sessions"), db.query_int("SELECT count(*) FROM events"));
}

}  // namespace
}  // namespace trace2d::test
