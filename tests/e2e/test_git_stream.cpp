// The real git, pointed at a real trace2d over the stream socket. Each test
// compares what trace2d stored with what git writes for the same command into
// a trace directory (run on an identical twin setup).

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <memory>

#include "tests/e2e/daemon_fixture.hpp"
#include "proto/sid.hpp"

namespace trace2d::test {
namespace {

// The pid git encodes at the end of its SID component ("-P%08x").
long pid_in_sid(const std::string& sid) { return static_cast<long>(proto::sid_pid(sid).value_or(-1)); }

class GitStreamTest : public ::testing::Test {
 protected:
  std::map<std::string, std::string> traced(std::map<std::string, std::string> env = {}) {
    env["GIT_TRACE2_EVENT"] = m_daemon->git_target();
    return env;
  }

  // Runs `args` in `twin` with a directory target; returns per-SID counts.
  std::map<std::string, long> dir_capture(const std::string& twin, const std::vector<std::string>& args,
                                          std::map<std::string, std::string> env = {}) {
    const std::string dir = m_dir.file("capture-" + std::to_string(m_captures++));
    std::filesystem::create_directories(dir);
    env["GIT_TRACE2_EVENT"] = dir;
    run_git(twin, args, env);
    return count_events_in_trace_dir(dir);
  }

  // Stops trace2d (which flushes everything) and checks it exited cleanly.
  void stop_daemon() {
    const ProcessResult result = m_daemon->stop();
    ASSERT_EQ(result.exit_code, 0) << result.err;
  }

  // Asserts the per-SID event counts in the database equal `expected`'s shape.
  void expect_same_counts(const std::map<std::string, long>& expected) {
    const auto stored = count_events_in_db(m_daemon->db_path());
    EXPECT_EQ(by_shape(stored), by_shape(expected));
  }

  // Every stored event must be valid JSON; `raw` only where bytes differ.
  void expect_valid_json_everywhere() {
    db::Database db = open_db(m_daemon->db_path());
    EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE NOT json_valid(json)"), 0);
    EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE raw IS NOT NULL AND raw = CAST(json AS BLOB)"), 0);
    EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
    EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions s WHERE event_count != "
                           "(SELECT count(*) FROM event_store e WHERE e.session = s.id)"),
              0);
  }

  TempDir m_dir;
  std::unique_ptr<RunningDaemon> m_daemon = std::make_unique<RunningDaemon>(m_dir);
  int m_captures = 0;
};

TEST_F(GitStreamTest, StatusIsOneCompleteSession) {
  const std::string repo = make_repo(m_dir, "a");
  const std::string twin = make_repo(m_dir, "b");
  const ProcessResult git = run_git(repo, {"status"}, traced());
  ASSERT_EQ(git.exit_code, 0) << git.err;
  const auto expected = dir_capture(twin, {"status"});
  stop_daemon();

  expect_same_counts(expected);
  expect_valid_json_everywhere();
  db::Database db = open_db(m_daemon->db_path());
  db::Statement s = db.prepare(
      "SELECT sid, parent_sid, root_sid, depth, cmd_name, exit_code, status, argv, source, peer_pid,"
      " peer_uid, event_count, elapsed, start_time, end_time, exe, worktree FROM sessions");
  ASSERT_TRUE(s.step());
  const std::string sid(s.column_text(0));
  EXPECT_TRUE(s.column_is_null(1));
  EXPECT_EQ(s.column_text(2), sid);
  EXPECT_EQ(s.column_int(3), 0);
  EXPECT_EQ(s.column_text(4), "status");
  EXPECT_EQ(s.column_int(5), 0);
  EXPECT_EQ(s.column_text(6), "complete");
  EXPECT_EQ(s.column_text(7), R"(["git","status"])");
  EXPECT_EQ(s.column_text(8), "stream");
  EXPECT_EQ(s.column_int(9), pid_in_sid(sid));  // SO_PEERCRED agrees with git's own pid
  EXPECT_EQ(s.column_int(10), static_cast<long>(::getuid()));
  EXPECT_EQ(s.column_int(11), expected.begin()->second);
  EXPECT_GT(s.column_double(12), 0.0);
  EXPECT_EQ(s.column_text(13).size(), 27u);  // 2026-11-21T23:51:01.565683Z
  EXPECT_EQ(s.column_text(14).size(), 27u);
  EXPECT_FALSE(s.column_is_null(15));
  EXPECT_EQ(s.column_text(16), std::filesystem::canonical(repo).string());
  EXPECT_FALSE(s.step());
}

TEST_F(GitStreamTest, FetchChildrenAreStitchedUnderTheFetch) {
  auto setup = [&](const std::string& name) {
    const std::string upstream = make_repo(m_dir, name + "-upstream");
    const std::string clone = m_dir.file(name + "-clone");
    EXPECT_EQ(run_git(m_dir.path(), {"clone", "-q", upstream, clone}).exit_code, 0);
    write_file(std::filesystem::path(upstream) / "new.txt", "new\n");
    EXPECT_EQ(run_git(upstream, {"add", "new.txt"}).exit_code, 0);
    EXPECT_EQ(run_git(upstream, {"commit", "-qm", "new"}).exit_code, 0);
    settle_repo(clone);
    return clone;
  };
  const std::string clone = setup("a");
  const std::string twin = setup("b");
  const ProcessResult git = run_git(clone, {"fetch", "--no-auto-gc", "origin"}, traced());
  ASSERT_EQ(git.exit_code, 0) << git.err;
  const auto expected = dir_capture(twin, {"fetch", "--no-auto-gc", "origin"});
  stop_daemon();

  expect_same_counts(expected);
  expect_valid_json_everywhere();
  db::Database db = open_db(m_daemon->db_path());
  const auto fetch_sid = db.query_text("SELECT sid FROM sessions WHERE cmd_name = 'fetch'");
  ASSERT_TRUE(fetch_sid);
  db::Statement children = db.prepare(
      "SELECT cmd_name, status, depth, root_sid FROM sessions WHERE parent_sid = ? ORDER BY sid");
  children.bind_text(1, *fetch_sid);
  std::vector<std::string> names;
  while (children.step()) {
    names.emplace_back(children.column_text(0));
    EXPECT_EQ(children.column_text(1), "complete");
    EXPECT_EQ(children.column_int(2), 1);
    EXPECT_EQ(children.column_text(3), *fetch_sid);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "upload-pack"), names.end());
  EXPECT_GE(names.size(), 2u);
  // pack-objects runs under upload-pack: a grandchild of the fetch.
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions g JOIN sessions p ON g.parent_sid = p.sid"
                         " WHERE g.cmd_name = 'pack-objects' AND p.cmd_name = 'upload-pack'"
                         " AND g.depth = 2"),
            1);
}

TEST_F(GitStreamTest, ShellAliasChildIsStitched) {
  const std::string repo = make_repo(m_dir, "a");
  const std::string twin = make_repo(m_dir, "b");
  for (const auto& r : {repo, twin}) {
    ASSERT_EQ(run_git(r, {"config", "alias.st", "!git status --short"}).exit_code, 0);
  }
  ASSERT_EQ(run_git(repo, {"st"}, traced()).exit_code, 0);
  const auto expected = dir_capture(twin, {"st"});
  stop_daemon();

  expect_same_counts(expected);
  expect_valid_json_everywhere();
  db::Database db = open_db(m_daemon->db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions"), 2);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions c JOIN sessions p ON c.parent_sid = p.sid"
                         " WHERE c.cmd_name = 'status' AND p.cmd_name = '_run_shell_alias_'"
                         " AND c.status = 'complete' AND p.status = 'complete'"),
            1);
  EXPECT_EQ(db.query_text("SELECT hierarchy FROM sessions WHERE cmd_name = 'status'"),
            "_run_dashed_/_run_shell_alias_/status");
}

TEST_F(GitStreamTest, FreeTextParentSidPrefix) {
  const std::string repo = make_repo(m_dir, "a");
  const std::string twin = make_repo(m_dir, "b");
  const std::map<std::string, std::string> parent = {{"GIT_TRACE2_PARENT_SID", "ci-job 42/step 7"}};
  ASSERT_EQ(run_git(repo, {"rev-parse", "HEAD"}, traced(parent)).exit_code, 0);
  const auto expected = dir_capture(twin, {"rev-parse", "HEAD"}, parent);
  stop_daemon();

  expect_same_counts(expected);
  db::Database db = open_db(m_daemon->db_path());
  db::Statement s = db.prepare("SELECT sid, parent_sid, root_sid, depth FROM sessions");
  ASSERT_TRUE(s.step());
  EXPECT_TRUE(std::string(s.column_text(0)).starts_with("ci-job 42/step 7/"));
  EXPECT_EQ(s.column_text(1), "ci-job 42/step 7");
  EXPECT_EQ(s.column_text(2), "ci-job 42");
  EXPECT_EQ(s.column_int(3), 2);
  EXPECT_FALSE(s.step());  // the parents never sent events: no rows for them
}

TEST_F(GitStreamTest, BriefModeKeepsEveryEvent) {
  const std::string repo = make_repo(m_dir, "a");
  const std::string twin = make_repo(m_dir, "b");
  const std::map<std::string, std::string> brief = {{"GIT_TRACE2_EVENT_BRIEF", "1"}};
  ASSERT_EQ(run_git(repo, {"status"}, traced(brief)).exit_code, 0);
  const auto expected = dir_capture(twin, {"status"}, brief);
  stop_daemon();

  expect_same_counts(expected);
  expect_valid_json_everywhere();
  db::Database db = open_db(m_daemon->db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE json_extract(json, '$.file') IS NOT NULL"), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE time IS NOT NULL AND event NOT IN ('version', 'atexit')"), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE time IS NOT NULL"), 2);
  EXPECT_EQ(db.query_text("SELECT status FROM sessions"), "complete");
  EXPECT_GT(db.query_int("SELECT elapsed > 0 FROM sessions").value_or(0), 0);
}

TEST_F(GitStreamTest, DeeperNestingSendsMoreEventsAndAllAreStored) {
  const std::string repo = make_repo(m_dir, "a");
  const std::string twin = make_repo(m_dir, "b");
  const std::map<std::string, std::string> nesting = {{"GIT_TRACE2_EVENT_NESTING", "5"}};
  ASSERT_EQ(run_git(repo, {"status"}, traced(nesting)).exit_code, 0);
  const auto expected = dir_capture(twin, {"status"}, nesting);
  const auto shallow = dir_capture(twin, {"status"});
  stop_daemon();

  expect_same_counts(expected);
  expect_valid_json_everywhere();
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_GT(expected.begin()->second, shallow.begin()->second);
  db::Database db = open_db(m_daemon->db_path());
  EXPECT_GE(db.query_int("SELECT max(nesting) FROM events"), 3);
}

TEST_F(GitStreamTest, InvalidUtf8InArgvIsStoredWithOriginalBytes) {
  const std::string repo = make_repo(m_dir, "a");
  const std::string twin = make_repo(m_dir, "b");
  const std::vector<std::string> args = {"rev-parse", "\xff", "\xc3\x28"};
  run_git(repo, args, traced());  // fails: no such revisions
  const auto expected = dir_capture(twin, args);
  stop_daemon();

  expect_same_counts(expected);
  db::Database db = open_db(m_daemon->db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE NOT json_valid(json)"), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
  EXPECT_EQ(db.query_text("SELECT argv FROM sessions"), "[\"git\",\"rev-parse\",\"\xEF\xBF\xBD\",\"\xEF\xBF\xBD(\"]");
  // The start event keeps git's exact bytes in `raw`.
  const auto raw = db.query_text("SELECT CAST(raw AS TEXT) FROM events WHERE event = 'start'");
  ASSERT_TRUE(raw);
  EXPECT_NE(raw->find("\"argv\":[\"git\",\"rev-parse\",\"\xff\",\"\xc3\x28\"]"), std::string::npos);
  EXPECT_EQ(db.query_int("SELECT exit_code FROM sessions"), 128);
}

TEST_F(GitStreamTest, GitKilledBySigtermLeavesAnIncompleteSession) {
  const std::string repo = make_repo(m_dir, "a");
  ProcessSpec spec = git_spec(repo, {"cat-file", "--batch"}, traced());
  spec.stdin_pipe = true;  // cat-file blocks reading it
  Process git(spec);
  // Wait until git has connected and said who it is.
  ASSERT_TRUE(wait_until([&] {
    db::Database db = open_db(m_daemon->db_path());
    return db.query_int("SELECT count(*) FROM sessions WHERE cmd_name = 'cat-file'").value_or(0) == 1;
  }));
  git.signal(SIGTERM);
  const ProcessResult ended = git.wait();
  EXPECT_EQ(ended.term_signal, SIGTERM);
  // EOF arrives once git is dead; the session cannot complete any more.
  ASSERT_TRUE(wait_until([&] {
    db::Database db = open_db(m_daemon->db_path());
    return db.query_text("SELECT status FROM sessions") == std::optional<std::string>("incomplete");
  }));
  stop_daemon();
  db::Database db = open_db(m_daemon->db_path());
  EXPECT_EQ(db.query_int("SELECT exit_code FROM sessions"), std::nullopt);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE event IN ('exit', 'atexit', 'signal')"), 0);
  EXPECT_GE(db.query_int("SELECT event_count FROM sessions"), 3);
}

TEST_F(GitStreamTest, SessionsSurviveADaemonRestart) {
  const std::string repo = make_repo(m_dir, "a");
  ASSERT_EQ(run_git(repo, {"status"}, traced()).exit_code, 0);
  stop_daemon();
  m_daemon = std::make_unique<RunningDaemon>(m_dir);
  ASSERT_EQ(run_git(repo, {"log", "-1"}, traced()).exit_code, 0);
  stop_daemon();
  db::Database db = open_db(m_daemon->db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE status = 'complete'"), 2);
  EXPECT_EQ(db.query_int("SELECT count(DISTINCT id) FROM sessions"), 2);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE event = 'version'"), 2);
}

}  // namespace
}  // namespace trace2d::test
