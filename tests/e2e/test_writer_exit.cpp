// A git killed while a child it started (a shell alias's `sleep`) still
// holds its trace2 connection open: trace2d sees from the kernel that the
// process that connected (SO_PEERCRED's pid) is gone, and marks its session
// incomplete within seconds instead of when the child exits.

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <sstream>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

std::optional<std::string> alias_status(const std::string& db_path) {
  db::Database db = open_db(db_path);
  return db.query_text("SELECT status FROM sessions WHERE argv LIKE '%hold%' ORDER BY id LIMIT 1");
}

// The children of `pid`, from /proc (the shell, or the sleep it became).
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  pid_t child = 0;
  while (in >> child) {
    out.push_back(child);
  }
  return out;
}

TEST(WriterExit, AKilledGitWhoseChildHoldsTheConnectionIsIncompleteWithinSeconds) {
  TempDir dir;
  RunningDaemon daemon(dir);
  const std::string repo = make_repo(dir, "repo", 2);
  Process git(git_spec(repo, {"-c", "alias.hold=!sleep 30", "hold"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}));
  ASSERT_TRUE(wait_until([&] { return alias_status(daemon.db_path()) == "running" && !children_of(git.pid()).empty(); }))
      << "no running session for the alias";
  const std::vector<pid_t> children = children_of(git.pid());
  // The child keeps the connection open; git itself is killed, and not
  // reaped yet: a zombie, as under a shell that has not waited for it.
  git.signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_TRUE(wait_until([&] { return alias_status(daemon.db_path()) == "incomplete"; }, std::chrono::seconds(6)))
      << "still " << alias_status(daemon.db_path()).value_or("absent");
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_LT(took_s, 6.0);
  for (const pid_t child : children) {
    ::kill(child, SIGKILL);
  }
  (void)git.wait(std::chrono::seconds(10));
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(alias_status(daemon.db_path()), "incomplete");
}

TEST(WriterExit, AGitThatExitsNormallyWhileItsChildRunsStaysComplete) {
  TempDir dir;
  RunningDaemon daemon(dir);
  const std::string repo = make_repo(dir, "repo", 2);
  // The alias's shell puts the sleep in the background and exits: git
  // exits normally (atexit) while the sleep still holds the connection.
  const ProcessResult r = run_git(repo, {"-c", "alias.hold=!sleep 3 &", "hold"},
                                  {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(wait_until([&] { return alias_status(daemon.db_path()) == "complete"; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // past a writer check
  EXPECT_EQ(alias_status(daemon.db_path()), "complete");
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

}  // namespace
}  // namespace trace2d::test
