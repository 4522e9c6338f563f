// git's start_command()/finish_command() split (issue 28): a real git
// started with pipes, the program sending events while it runs, then
// finished; through the C++ API (client-emitter-1.1) and the C ABI
// (client-command-c). The git writes its own session into the same target
// file, so the tests see both sides of the stitching.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/client/client_support.hpp"

namespace trace2d::test {
namespace {

// `git hash-object --stdin` of "hello\n".
constexpr const char* k_hello_blob = "ce013625030ba8dba906f756967f9e9ca394464a";

std::size_t index_of(const std::vector<std::string>& events, const std::string& event) {
  return static_cast<std::size_t>(std::find(events.begin(), events.end(), event) - events.begin());
}

// The lines of the sessions below `sid` (its children's).
std::vector<std::string> below(const std::vector<std::string>& lines, const std::string& sid) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    if (string_field(line, "sid").rfind(sid + "/", 0) == 0) {
      out.push_back(line);
    }
  }
  return out;
}

// The pid in a SID's last component ("...-P%08x").
long pid_of_sid(const std::string& sid) {
  const std::size_t at = sid.rfind("-P");
  return at == std::string::npos ? -1 : std::stol(sid.substr(at + 2), nullptr, 16);
}

// The program's side and git's side of one started-then-finished
// `git hash-object --stdin` (`program` names the program's cmd_name).
void expect_stitched_hash_object(const EmitterRun& run, const std::string& program) {
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ASSERT_FALSE(run.sid.empty()) << run.result.out;
  expect_parser_accepts(run.lines);
  EXPECT_EQ(stdout_value(run.result.out, "hash"), k_hello_blob) << "git read our stdin pipe";
  EXPECT_EQ(stdout_value(run.result.out, "code"), "0");
  EXPECT_EQ(stdout_value(run.result.out, "again"), "0");
  const std::string pid = stdout_value(run.result.out, "pid");

  // Ours: child_start, the region sent while git ran, child_exit once.
  const auto mine = of_session(run.lines, run.sid);
  const auto events = events_of(mine);
  const std::size_t start_at = index_of(events, "child_start");
  const std::size_t enter_at = index_of(events, "region_enter");
  const std::size_t leave_at = index_of(events, "region_leave");
  const std::size_t exit_at = index_of(events, "child_exit");
  ASSERT_LT(exit_at, events.size()) << "no child_exit";
  EXPECT_LT(start_at, enter_at);
  EXPECT_LT(enter_at, leave_at);
  EXPECT_LT(leave_at, exit_at) << "the region was sent while the child ran";
  EXPECT_EQ(std::count(events.begin(), events.end(), "child_exit"), 1) << "finished once";
  const std::string& child_start = mine[start_at];
  const std::string& child_exit = mine[exit_at];
  EXPECT_EQ(raw_field(child_start, "argv"), R"(["git","hash-object","--stdin"])");
  EXPECT_EQ(raw_field(child_start, "child_id"), raw_field(child_exit, "child_id"));
  EXPECT_EQ(raw_field(child_exit, "pid"), pid);
  EXPECT_EQ(raw_field(child_exit, "code"), "0");

  // git's: one session under ours, of the pid we reported, ended before
  // our child_exit.
  const auto git = below(run.lines, run.sid);
  ASSERT_FALSE(git.empty()) << "git got GIT_TRACE2_PARENT_SID and the target";
  const std::string git_sid = string_field(git.front(), "sid");
  EXPECT_EQ(of_session(run.lines, git_sid).size(), git.size()) << "one git session";
  EXPECT_EQ(std::to_string(pid_of_sid(git_sid)), pid) << git_sid;
  const auto names = with_event(git, "cmd_name");
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(string_field(names.front(), "hierarchy"), program + "/hash-object");
  EXPECT_EQ(string_field(git.back(), "event"), "atexit");
  EXPECT_EQ(raw_field(git.back(), "code"), "0");
  EXPECT_LE(string_field(child_start, "time"), string_field(git.front(), "time"));
  EXPECT_GE(string_field(child_exit, "time"), string_field(git.back(), "time"));
}

TEST(ClientCommands, AGitStartedThenFinishedRunsWhileTheProgramWorksAndIsItsChild) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_1_1_BIN, {"command"});
  EXPECT_EQ(stdout_value(run.result.out, "started"), "1");
  expect_stitched_hash_object(run, "client-emitter-1.1");
}

TEST(ClientCommands, TheCCallsStartAndFinishAGitTheSameWay) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_COMMAND_C_BIN, {});
  EXPECT_EQ(stdout_value(run.result.out, "start"), "0");
  expect_stitched_hash_object(run, "client-command-c");
}

TEST(ClientCommands, FinishPastItsTimeoutKillsTheChild) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_1_1_BIN, {"command-timeout"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "timed_out"), "1");
  EXPECT_EQ(stdout_value(run.result.out, "code"), "137");  // 128 + SIGKILL, as git
  EXPECT_LT(run.result.seconds, 10.0);
  const auto exits = with_event(of_session(run.lines, run.sid), "child_exit");
  ASSERT_EQ(exits.size(), 1U);
  EXPECT_EQ(raw_field(exits[0], "code"), "137");
  // git was killed: its session has no atexit.
  const auto git = below(run.lines, run.sid);
  ASSERT_FALSE(git.empty());
  EXPECT_TRUE(with_event(git, "atexit").empty());
}

TEST(ClientCommands, TheDestructorClosesStdinAndFinishesAChildLeftRunning) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_1_1_BIN, {"command-scope"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const auto mine = of_session(run.lines, run.sid);
  ASSERT_EQ(with_event(mine, "child_start").size(), 1U) << "the moved-from object started nothing";
  const auto exits = with_event(mine, "child_exit");
  ASSERT_EQ(exits.size(), 1U);
  EXPECT_EQ(raw_field(exits[0], "code"), "0") << "git cat-file --batch ends at end of input";
  const auto git = below(run.lines, run.sid);
  ASSERT_FALSE(git.empty());
  EXPECT_EQ(raw_field(exits[0], "pid"),
            std::to_string(pid_of_sid(string_field(git.front(), "sid"))));
  EXPECT_EQ(string_field(git.back(), "event"), "atexit");
}

TEST(ClientCommands, AProgramThatCannotStartIsReportedAtOnce) {
  for (const std::string program : {CLIENT_EMITTER_1_1_BIN, CLIENT_COMMAND_C_BIN}) {
    TempDir dir;
    const bool c = program == CLIENT_COMMAND_C_BIN;
    const EmitterRun run = run_emitter(dir, program, {c ? "missing" : "command-missing"});
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    EXPECT_EQ(stdout_value(run.result.out, c ? "start" : "started"), c ? "-1" : "0");
    EXPECT_EQ(stdout_value(run.result.out, "pid"), "-1");
    EXPECT_EQ(stdout_value(run.result.out, "code"), "-1");
    if (c) {
      EXPECT_EQ(stdout_value(run.result.out, "stdout_fd"), "-1") << "no pipe left open";
    }
    // As git's start_command: child_exit with pid and code -1, once.
    const auto mine = of_session(run.lines, run.sid);
    const auto exits = with_event(mine, "child_exit");
    ASSERT_EQ(exits.size(), 1U) << program;
    EXPECT_EQ(raw_field(exits[0], "pid"), "-1");
    EXPECT_EQ(raw_field(exits[0], "code"), "-1");
    EXPECT_EQ(with_event(mine, "child_start").size(), 1U);
  }
}

}  // namespace
}  // namespace trace2d::test
