// Ending a session on purpose: execvp() through the library (the session is
// complete before the new program replaces the process), flush and shutdown
// in a forked child that leaves with _exit(), and exit codes that are the
// process's real ones.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/client/client_support.hpp"

namespace trace2d::test {
namespace {

std::vector<std::string> of_session(const std::vector<std::string>& lines, const std::string& sid) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    if (string_field(line, "sid") == sid) {
      out.push_back(line);
    }
  }
  return out;
}

std::vector<std::string> events_of(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    out.push_back(string_field(line, "event"));
  }
  return out;
}

TEST(ClientExec, ExecEndsTheSessionThenRunsTheProgram) {
  TempDir dir;
  const EmitterRun run =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"exec", "/bin/echo", "exec", "ran"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_NE(run.result.out.find("exec ran\n"), std::string::npos) << run.result.out;
  EXPECT_EQ(run.result.out.find("exec_errno"), std::string::npos) << "execvp returned";
  expect_parser_accepts(run.lines);
  const auto mine = of_session(run.lines, run.sid);
  EXPECT_EQ(events_of(mine), (std::vector<std::string>{"version", "start", "cmd_name",
                                                         "region_enter", "region_leave", "exec",
                                                         "exit", "atexit"}));
  ASSERT_EQ(mine.size(), 8u);
  EXPECT_EQ(raw_field(mine[5], "exec_id"), "0");
  EXPECT_EQ(string_field(mine[5], "exe"), "/bin/echo");
  EXPECT_EQ(raw_field(mine[5], "argv"), R"(["/bin/echo","exec","ran"])");
  // The code is the new program's, unknown here: -1, never a made-up 0.
  EXPECT_EQ(raw_field(mine[6], "code"), "-1");
  EXPECT_EQ(raw_field(mine[7], "code"), "-1");
}

TEST(ClientExec, AnExecdGitIsAChildOfTheWrappersSession) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"exec", "git", "version"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_NE(run.result.out.find("git version"), std::string::npos) << run.result.out;
  expect_parser_accepts(run.lines);
  std::vector<std::string> git;
  for (const auto& line : run.lines) {
    if (string_field(line, "sid") != run.sid) {
      git.push_back(line);
    }
  }
  ASSERT_FALSE(git.empty()) << "git wrote to the target the wrapper exported";
  const std::string git_sid = string_field(git.front(), "sid");
  EXPECT_EQ(git_sid.rfind(run.sid + "/", 0), 0u) << git_sid;
  EXPECT_EQ(string_field(git.back(), "event"), "atexit");
  // The wrapper's own session ended before git's began.
  const auto mine = of_session(run.lines, run.sid);
  ASSERT_FALSE(mine.empty());
  EXPECT_EQ(string_field(mine.back(), "event"), "atexit");
}

TEST(ClientExec, AFailedExecIsReportedAndTheProgramGoesOn) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"exec", "/nonexistent/program"});
  EXPECT_EQ(run.result.exit_code, 3) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "exec_errno"), "2") << "ENOENT reaches the caller";
  expect_parser_accepts(run.lines);
  const auto mine = of_session(run.lines, run.sid);
  const auto results = with_event(mine, "exec_result");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(raw_field(results[0], "exec_id"), "0");
  EXPECT_EQ(raw_field(results[0], "code"), "-1");
  // The real exit comes last and carries the real code.
  ASSERT_FALSE(mine.empty());
  EXPECT_EQ(string_field(mine.back(), "event"), "atexit");
  EXPECT_EQ(raw_field(mine.back(), "code"), "3");
}

std::vector<std::string> forked_child_lines(const EmitterRun& run) {
  const std::string child_sid = stdout_value(run.result.out, "child_sid");
  EXPECT_EQ(child_sid.rfind(run.sid + "/", 0), 0u) << child_sid;
  return of_session(run.lines, child_sid);
}

TEST(ClientFork, AForkedChildThatFlushesBeforeExitHasItsEventsOut) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"fork-exit", "flush"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "child_code"), "3") << "flush said it handed all over";
  expect_parser_accepts(run.lines);
  EXPECT_EQ(events_of(forked_child_lines(run)),
            (std::vector<std::string>{"version", "start", "cmd_name", "region_enter",
                                      "region_leave"}))
      << "_exit() runs no handler: no exit events";
}

TEST(ClientFork, AForkedChildThatShutsDownEndsItsSessionWithItsCode) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"fork-exit", "shutdown"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "child_code"), "3") << "shutdown said all went out";
  expect_parser_accepts(run.lines);
  const auto child = forked_child_lines(run);
  EXPECT_EQ(events_of(child), (std::vector<std::string>{"version", "start", "cmd_name",
                                                         "region_enter", "region_leave", "exit",
                                                         "atexit"}));
  ASSERT_FALSE(child.empty());
  EXPECT_EQ(raw_field(child.back(), "code"), "3");
}

TEST(ClientExit, ExitWithoutTheLibrarysExitSendsTheRealCode) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"exit-code", "5"});
  ASSERT_EQ(run.result.exit_code, 5) << run.result.err;
  expect_parser_accepts(run.lines);
  const auto exits = with_event(run.lines, "exit");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(raw_field(exits[0], "code"), "5");
  ASSERT_FALSE(run.lines.empty());
  EXPECT_EQ(string_field(run.lines.back(), "event"), "atexit");
  EXPECT_EQ(raw_field(run.lines.back(), "code"), "5");
}

}  // namespace
}  // namespace trace2d::test
