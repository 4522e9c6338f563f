// trace2ctl doctor against the real git and a real trace2d: git traces
// silently nowhere when the target lacks `af_unix:`, when trace2d is down,
// or when trace2.eventTarget sits in a repository's config; doctor says
// which, and what to do.

#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

// trace2ctl doctor as a user runs it: their environment (GIT_TRACE2_EVENT
// as given, or unset), their HOME (the global config), no system config.
ProcessResult doctor(const TempDir& dir, const std::string& db, const std::string& cwd,
                     const std::optional<std::string>& target, const std::vector<std::string>& args = {}) {
  ProcessSpec spec;
  spec.argv = {TRACE2CTL_BIN, "--db", db, "doctor"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  spec.env = {{"HOME", dir.file("home")}, {"GIT_CONFIG_NOSYSTEM", "1"}, {"XDG_CONFIG_HOME", dir.file("home/.config")}};
  spec.unset_env = {"GIT_TRACE2", "GIT_TRACE2_PERF", "GIT_CONFIG_GLOBAL"};
  if (target) {
    spec.env["GIT_TRACE2_EVENT"] = *target;
  } else {
    spec.unset_env.push_back("GIT_TRACE2_EVENT");
  }
  return run_process(spec, std::chrono::seconds(30));
}

std::int64_t sessions_in(const std::string& db) {
  const ProcessResult r = ctl(db, {"--format", "tsv", "sql", "SELECT count(*) FROM sessions"});
  return r.exit_code == 0 ? std::stoll(r.out.substr(r.out.find('\n') + 1)) : -1;
}

class Doctor : public ::testing::Test {
 protected:
  TempDir dir;
  std::string repo = make_repo(dir, "repo", 2);
  RunningDaemon daemon{dir};
};

TEST_F(Doctor, ARightTargetWithTrace2dBehindItIsAllOk) {
  ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return sessions_in(daemon.db_path()) == 1; }));
  const ProcessResult r = doctor(dir, daemon.db_path(), repo, daemon.git_target());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("note: git uses '" + daemon.git_target() + "' (GIT_TRACE2_EVENT in the environment)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ok: " + daemon.socket_path() + " takes connections (a stream socket)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ok: " + daemon.db_path() + ": you can read it; 1 session visible to you"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ok: trace2d (pid " + std::to_string(daemon.pid()) + ") writes this database"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("problem:"), std::string::npos) << r.out;
}

// A stopped (SIGSTOP) or hung trace2d: its socket still takes connections
// (the kernel queues them), so only its stale status tells; git's events
// meanwhile go nowhere. doctor said all was ok.
TEST_F(Doctor, AHungTrace2dIsNamedThoughItsSocketTakesConnections) {
  // Its first status written (a loaded host may take a moment).
  ASSERT_TRUE(wait_until(
      [&] { return open_db(daemon.db_path()).query_int("SELECT count(*) FROM daemon_status").value_or(0) == 1; }));
  struct Resumed {
    pid_t pid;
    ~Resumed() { ::kill(pid, SIGCONT); }
  } resumed{daemon.pid()};
  // Every thread of it stopped ('T').
  const auto stopped = [&] {
    for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(daemon.pid()) + "/task")) {
      std::ifstream stat(task.path() / "stat");
      std::string line;
      std::getline(stat, line);
      const auto state = line.rfind(") ");
      if (state == std::string::npos || state + 2 >= line.size() || line[state + 2] != 'T') {
        return false;
      }
    }
    return true;
  };
  // Stopped (its state 'T', so that it writes no fresh status meanwhile),
  // then its last status made 20 s old rather than waiting that long;
  // stopped inside a transaction of its own, it is let go and stopped again.
  bool made_old = false;
  for (int attempt = 0; attempt < 10 && !made_old; ++attempt) {
    ASSERT_EQ(::kill(daemon.pid(), SIGSTOP), 0);
    ASSERT_TRUE(wait_until(stopped));
    try {
      db::Database db(daemon.db_path(), db::OpenMode::read_write_create);
      db.set_busy_timeout(500);
      db.exec("UPDATE daemon_status SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-20 seconds')");
      made_old = true;
    } catch (const db::SqliteError&) {
      ::kill(daemon.pid(), SIGCONT);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_TRUE(made_old);
  const ProcessResult r = doctor(dir, daemon.db_path(), repo, daemon.git_target());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ok: " + daemon.socket_path() + " takes connections"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("problem: trace2d (pid " + std::to_string(daemon.pid()) + ") lives but last updated its status 2"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  fix: see its log"), std::string::npos) << r.out;
}

TEST_F(Doctor, ASocketWithoutTheAfUnixPrefixIsNamedAndGitIndeedSendsNothing) {
  // What the user meant: git given the bare socket path.
  ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.socket_path()}}).exit_code, 0);
  const ProcessResult r = doctor(dir, daemon.db_path(), repo, daemon.socket_path());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("problem: " + daemon.socket_path() + " is a socket, but without the af_unix: prefix git opens "
                       "it as a file"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  fix: GIT_TRACE2_EVENT=af_unix:" + daemon.socket_path()), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("1 problem found"), std::string::npos) << r.err;
  // git ran untraced, as doctor said: the fix then works.
  EXPECT_EQ(sessions_in(daemon.db_path()), 0);
  ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", "af_unix:" + daemon.socket_path()}}).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return sessions_in(daemon.db_path()) == 1; }));
}

TEST_F(Doctor, AStoppedTrace2dIsNamed) {
  const std::string target = daemon.git_target();
  ASSERT_EQ(daemon.stop().exit_code, 0);
  const ProcessResult r = doctor(dir, daemon.db_path(), repo, target);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // trace2d removes its socket at exit; one killed leaves it behind.
  const bool named = r.out.find("problem: there is no socket at " + daemon.socket_path()) != std::string::npos ||
                     r.out.find("problem: nothing listens on " + daemon.socket_path()) != std::string::npos;
  EXPECT_TRUE(named) << r.out;
  EXPECT_NE(r.out.find("  fix: start"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("problem: the trace2d that wrote this database (pid " + std::to_string(daemon.pid()) +
                       ") is not running"),
            std::string::npos)
      << r.out;
}

TEST_F(Doctor, NoTargetAnywhereIsNamedAndARepositorysOwnSettingIsIgnoredAsGitDoes) {
  ASSERT_EQ(run_git(repo, {"config", "--local", "trace2.eventTarget", daemon.git_target()}).exit_code, 0);
  // git ignores it: a git run here sends nothing.
  ProcessSpec git = git_spec(repo, {"status"});
  git.env["HOME"] = dir.file("home");
  git.env["GIT_CONFIG_NOSYSTEM"] = "1";
  ASSERT_EQ(run_process(git).exit_code, 0);
  const ProcessResult r = doctor(dir, daemon.db_path(), repo, std::nullopt);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("note: this repository's config sets trace2.eventTarget = '" + daemon.git_target() +
                       "', which git ignores"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("problem: git traces nothing: neither GIT_TRACE2_EVENT nor trace2.eventTarget"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(sessions_in(daemon.db_path()), 0);
}

TEST_F(Doctor, TheGlobalConfigIsReadAndJsonSaysTheSame) {
  std::filesystem::create_directories(dir.file("home"));
  write_file(dir.file("home/.gitconfig"), "[trace2]\n\teventTarget = " + daemon.git_target() + "\n");
  const ProcessResult r = doctor(dir, daemon.db_path(), repo, std::nullopt, {"--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(R"x({"check":"target","verdict":"note","detail":"git uses ')x" + daemon.git_target() +
                       R"x(' (trace2.eventTarget in the global config)","fix":""})x"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"("check":"socket","verdict":"ok")"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace trace2d::test
