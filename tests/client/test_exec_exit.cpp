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

TEST(ClientExec, ExecEndsTheSessionThenRunsTheProgram) {
  TempDir dir;
  const EmitterRun run =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"exec", "/bin/echo", "exec", "ran"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_NE(run.result.out.find("exec ran\n"), std::string::npos) << run.result.out;
  EXPECT_EQ(run.result.out.find("exec_errno"), std::string::npos) << "execvp returned";
  expect_parser_accepts(run.lines);
  const auto mine = of_session(run.lines, run.sid);
  EXPECT_EQ(events_of(mine),
            (std::vector<std::string>{"version", "start", "cmd_ancestry", "cmd_name",
                                      "region_enter", "region_leave", "exec", "exit", "atexit"}));
  ASSERT_EQ(mine.size(), 9u);
  EXPECT_EQ(raw_field(mine[6], "exec_id"), "0");
  EXPECT_EQ(string_field(mine[6], "exe"), "/bin/echo");
  EXPECT_EQ(raw_field(mine[6], "argv"), R"(["/bin/echo","exec","ran"])");
  // The code is the new program's, unknown here: -1, never a made-up 0.
  EXPECT_EQ(raw_field(mine[7], "code"), "-1");
  EXPECT_EQ(raw_field(mine[8], "code"), "-1");
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
            (std::vector<std::string>{"version", "start", "cmd_ancestry", "cmd_name",
                                      "region_enter", "region_leave"}))
      << "_exit() runs no handler: no exit events";
}

TEST(ClientFork, AForkedChildThatShutsDownEndsItsSessionWithItsCode) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"fork-exit", "shutdown"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "child_code"), "3") << "shutdown said all went out";
  expect_parser_accepts(run.lines);
  const auto child = forked_child_lines(run);
  EXPECT_EQ(events_of(child),
            (std::vector<std::string>{"version", "start", "cmd_ancestry", "cmd_name",
                                      "region_enter", "region_leave", "exit", "atexit"}));
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

// ---- What the program can learn at run time --------------------------------

TEST(ClientDiagnostics, DataJsonSaysWhetherItWasValidAndEventsCarryTheCallersLine) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"diagnose"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "json_ok"), "1");
  EXPECT_EQ(stdout_value(run.result.out, "json_bad"), "0");
  EXPECT_EQ(stdout_value(run.result.out, "dropped"), "0") << "a 1 MiB queue holds 1000 events";
  const auto json = with_event(run.lines, "data_json");
  ASSERT_EQ(json.size(), 1u) << "invalid JSON is not sent";
  EXPECT_EQ(raw_field(json[0], "value"), R"({"a":[1,2]})");
  const auto enter = with_event(run.lines, "region_enter");
  ASSERT_EQ(enter.size(), 1u);
  // The C++ API's Location (__builtin_FILE/__builtin_LINE) is the caller's.
  EXPECT_EQ(raw_field(enter[0], "line"), stdout_value(run.result.out, "region_line"));
  const std::string file = string_field(enter[0], "file");
  EXPECT_EQ(file.substr(file.size() - std::string("emitter.cpp").size()), "emitter.cpp") << file;
}

TEST(ClientDiagnostics, DropsAreCountedBeforeFormattingAndReadableAtRunTime) {
  TempDir dir;
  // A queue of 64 bytes holds no event: everything after start is dropped.
  const EmitterRun run =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"--queue-bytes", "64", "diagnose"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  // start()'s version, start, cmd_ancestry and cmd_name, the valid
  // data_json (the invalid one is refused, not dropped), two region
  // events, 1000 data.
  const long dropped = std::stol(stdout_value(run.result.out, "dropped"));
  EXPECT_EQ(dropped, 4 + 1 + 2 + 1000);
  const auto counted = with_event(run.lines, "data");
  ASSERT_EQ(counted.size(), 1u) << "only the library's drop count goes out, at exit";
  EXPECT_EQ(string_field(counted[0], "key"), "dropped_events");
  EXPECT_EQ(std::stol(string_field(counted[0], "value")), dropped);
}

TEST(ClientDiagnostics, TracingOffSaysWhy) {
  TempDir dir;
  const EmitterRun none =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"diagnose"}, {{"GIT_TRACE2_EVENT", ""}});
  ASSERT_EQ(none.result.exit_code, 0) << none.result.err;
  EXPECT_NE(stdout_value(none.result.out, "off_reason").find("no target"), std::string::npos)
      << none.result.out;
  // Off on purpose, git's way: not told as a failure to open "0".
  for (const char* off : {"0", "false"}) {
    const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"}, {{"GIT_TRACE2_EVENT", off}});
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    EXPECT_EQ(stdout_value(run.result.out, "off_reason"),
              std::string("tracing is off: the target is '") + off + "', which git reads as false")
        << run.result.out;
  }
  // data_json judges the JSON with tracing off too.
  EXPECT_EQ(stdout_value(none.result.out, "json_ok"), "1");
  EXPECT_EQ(stdout_value(none.result.out, "json_bad"), "0");
  const EmitterRun missing = run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"},
                                         {{"GIT_TRACE2_EVENT", "af_unix:" + dir.file("none.sock")}});
  ASSERT_EQ(missing.result.exit_code, 0) << missing.result.err;
  EXPECT_NE(stdout_value(missing.result.out, "off_reason").find("could not connect"),
            std::string::npos)
      << missing.result.out;
  EXPECT_EQ(missing.result.err, "") << "git's warnings only with GIT_TRACE2_DST_DEBUG";
  const EmitterRun uninit = run_emitter(dir, CLIENT_EMITTER_C_BIN, {"uninit"});
  ASSERT_EQ(uninit.result.exit_code, 0) << uninit.result.err;
  EXPECT_EQ(stdout_value(uninit.result.out, "started"), "0");
  EXPECT_NE(stdout_value(uninit.result.out, "off_reason").find("trace2d_options_init"),
            std::string::npos)
      << uninit.result.out;
  EXPECT_TRUE(uninit.lines.empty()) << "nothing sent with options it cannot trust";
}

}  // namespace
}  // namespace trace2d::test
