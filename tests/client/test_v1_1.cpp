// What client 1.1 changed, each against the 1.0.0 behaviour it replaces
// (issue 28): guards that leave their own region from any thread and in
// any order, FIFO targets that cannot hang start(), typed data, the exit
// event after the leaves of live guards, nesting-limit drops counted, the
// SID after shutdown(), and git's cmd_ancestry.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include "proto/json_quote.hpp"
#include "tests/client/client_support.hpp"

namespace trace2d::test {
namespace {

EmitterRun run_scenario(const TempDir& dir, const std::string& scenario) {
  EmitterRun run = run_emitter(dir, CLIENT_EMITTER_1_1_BIN, {scenario});
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_FALSE(run.sid.empty()) << run.result.out;
  expect_parser_accepts(run.lines);
  return run;
}

std::vector<std::string> labelled(const std::vector<std::string>& lines, std::string_view event,
                                  std::string_view label) {
  std::vector<std::string> out;
  for (const auto& line : with_event(lines, event)) {
    if (string_field(line, "label") == label) {
      out.push_back(line);
    }
  }
  return out;
}

// The region events in the order written, as "enter a 1" / "leave a 1".
std::vector<std::string> region_story(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    const std::string event = string_field(line, "event");
    if (event == "region_enter" || event == "region_leave") {
      out.push_back(event.substr(7) + " " + string_field(line, "label") + " " +
                    raw_field(line, "nesting") + " " + string_field(line, "thread"));
    }
  }
  return out;
}

TEST(ClientGuards, HeapGuardsDestroyedOutOfOrderLeaveTheirOwnRegion) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "guards-heap");
  // 1.0: destroying A sent the leave of B (the innermost), and C nested at 3.
  const std::vector<std::string> expected = {
      "enter a 1 main", "enter b 2 main", "leave a 1 main",
      "enter c 2 main", "leave c 2 main", "leave b 2 main"};
  EXPECT_EQ(region_story(run.lines), expected);
}

TEST(ClientGuards, LeavesCarryTheirRegionsNamesLongOrShortLeftInAnyOrder) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "guards-names");
  std::vector<std::string> leaves;
  for (const auto& line : with_event(run.lines, "region_leave")) {
    leaves.push_back(string_field(line, "category") + ":" + string_field(line, "label") + " " +
                     raw_field(line, "nesting"));
  }
  const std::vector<std::string> expected = {"a-long-category:" + std::string(100, 'l') + " 1",
                                             "c:" + std::string(70, 'c') + " 2", "d:x 2",
                                             "b:short 2"};
  EXPECT_EQ(leaves, expected);
}

TEST(ClientGuards, AGuardEndedOnAnotherThreadLeavesItsRegionOnItsThread) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "guards-thread");
  // 1.0: nothing was sent for main-a, and "after" nested one level deeper.
  const std::vector<std::string> expected = {"enter main-a 1 main", "leave main-a 1 main",
                                             "enter after 1 main", "leave after 1 main"};
  EXPECT_EQ(region_story(run.lines), expected);
}

TEST(ClientGuards, GuardsMovedIntoHeapAndOptionalRecordTheirCallSite) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "guards-location");
  for (const char* label : {"make_unique", "optional", "emplace", "early"}) {
    const auto enters = labelled(run.lines, "region_enter", label);
    const auto leaves = labelled(run.lines, "region_leave", label);
    ASSERT_EQ(enters.size(), 1U) << label;
    ASSERT_EQ(leaves.size(), 1U) << label;  // "early" left once, not again at scope exit
    // 1.0 recorded /usr/include/c++/12/bits/unique_ptr.h for make_unique.
    EXPECT_TRUE(string_field(enters[0], "file").ends_with("emitter_v1_1.cpp")) << enters[0];
  }
}

TEST(ClientExit, ExitFollowsTheLeavesOfGuardsAliveAtReturn) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "exit-live-region");
  std::size_t leave_at = run.lines.size();
  std::size_t exit_at = run.lines.size();
  for (std::size_t i = 0; i < run.lines.size(); ++i) {
    const std::string event = string_field(run.lines[i], "event");
    if (event == "region_leave") {
      leave_at = i;
    } else if (event == "exit") {
      exit_at = i;
    }
  }
  ASSERT_LT(leave_at, run.lines.size());
  ASSERT_LT(exit_at, run.lines.size());
  EXPECT_LT(leave_at, exit_at);
  // 1.0 formatted exit at the exit() call: earlier than the leave after it.
  EXPECT_LE(string_field(run.lines[leave_at], "time"), string_field(run.lines[exit_at], "time"));
  EXPECT_TRUE(string_field(run.lines[exit_at], "file").ends_with("emitter_v1_1.cpp"));
  EXPECT_EQ(raw_field(run.lines[exit_at], "code"), "0");
}

TEST(ClientData, TypedValuesAreSentAsWhatTheyAre) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "typed-data");
  std::map<std::string, std::string> values;
  for (const auto& line : with_event(run.lines, "data")) {
    values[string_field(line, "key")] = string_field(line, "value");
  }
  // 1.0 sent "0" for 0.93 and "1" for true.
  const std::map<std::string, std::string> expected = {
      {"double", "0.93"},
      {"tiny", "1e-09"},
      {"float", "0.5"},
      {"true", "true"},
      {"false", "false"},
      {"int", "42"},
      {"negative", "-7"},
      {"u64max", "18446744073709551615"},
      {"short", "-3"},
      {"literal", "text"},
      {"string", "from std::string"},
      {"c-double", "2.5"},
      {"c-bool", "true"},
      {"c-uintmax", "18446744073709551615"}};
  EXPECT_EQ(values, expected);
}

TEST(ClientData, C11GenericDataPicksTheTypedCall) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_TYPED_DATA_C11_BIN, {});
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  expect_parser_accepts(run.lines);
  std::map<std::string, std::string> values;
  for (const auto& line : with_event(run.lines, "data")) {
    values[string_field(line, "key")] = string_field(line, "value");
  }
  const std::map<std::string, std::string> expected = {
      {"double", "0.25"},   {"float", "1.5"},     {"bool", "true"},
      {"int", "-42"},       {"long", "1234567890123"}, {"unsigned", "7"},
      {"u64max", "18446744073709551615"}, {"string", "text"}, {"literal", "literal"}};
  EXPECT_EQ(values, expected);
}

TEST(ClientDrops, NestingLimitDropsAreCountedByReason) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "nesting-drops");
  // The data at nesting 3 and the deeper region's enter and leave; 1.0 said 0.
  EXPECT_EQ(stdout_value(run.result.out, "dropped"), "3");
  EXPECT_EQ(stdout_value(run.result.out, "dropped_nesting"), "3");
  EXPECT_EQ(stdout_value(run.result.out, "dropped_queue_full"), "0");
  EXPECT_TRUE(labelled(run.lines, "region_enter", "deeper").empty());
  EXPECT_TRUE(with_event(run.lines, "data").empty());
}

TEST(ClientSid, SidStaysAfterShutdown) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "sid-after-shutdown");
  // 1.0 returned "" once the session had ended.
  EXPECT_EQ(stdout_value(run.result.out, "sid_after"), run.sid);
}

TEST(ClientChildren, OneMebibyteOfOutputIsCapturedWithoutDeadlock) {
  TempDir dir;
  // 1.0: run_child could only wait; a pipe as stdout_fd deadlocked at 64 KiB.
  const EmitterRun run = run_scenario(dir, "capture");
  EXPECT_EQ(stdout_value(run.result.out, "out_bytes"), "1048576");
  EXPECT_EQ(stdout_value(run.result.out, "out_ok"), "1");
  EXPECT_EQ(stdout_value(run.result.out, "err"), "to-stderr");
  EXPECT_EQ(stdout_value(run.result.out, "code"), "3");
  const auto exits = with_event(run.lines, "child_exit");
  ASSERT_EQ(exits.size(), 1U);
  EXPECT_EQ(raw_field(exits[0], "code"), "3");
  EXPECT_EQ(with_event(run.lines, "child_start").size(), 1U);
}

TEST(ClientChildren, ACapturedChildPastItsTimeoutIsKilled) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "capture-timeout");
  EXPECT_EQ(stdout_value(run.result.out, "timed_out"), "1");
  EXPECT_EQ(stdout_value(run.result.out, "code"), "137");  // 128 + SIGKILL, as git
  EXPECT_LT(run.result.seconds, 10.0);
  const auto exits = with_event(run.lines, "child_exit");
  ASSERT_EQ(exits.size(), 1U);
  EXPECT_EQ(raw_field(exits[0], "code"), "137");
}

TEST(ClientChildren, TheCCallCapturesTheSame) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "capture-c");
  EXPECT_EQ(stdout_value(run.result.out, "out_bytes"), "1048576");
  EXPECT_EQ(stdout_value(run.result.out, "code"), "3");
}

TEST(ClientOffSwitch, CompiledOutTheProgramRunsWithoutTheLibraryAndSendsNothing) {
  TempDir dir;
  // Linked without libtrace2d-client: it ran at all, so nothing called it.
  const EmitterRun run = run_emitter(dir, CLIENT_COMPILED_OUT_BIN, {});
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "started"), "0");
  EXPECT_NE(stdout_value(run.result.out, "off_reason").find("TRACE2D_CLIENT_OFF"),
            std::string::npos);
  EXPECT_EQ(stdout_value(run.result.out, "sid"), "[]");
  EXPECT_TRUE(run.lines.empty());
}

TEST(ClientMemorySink, AProgramReadsItsOwnEventsForItsTests) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_1_1_BIN, {"memory"});
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "started"), "1");
  EXPECT_EQ(stdout_value(run.result.out, "first"),
            "version,start,cmd_ancestry,cmd_name,region_enter,data,region_leave");
  EXPECT_EQ(stdout_value(run.result.out, "second"), "exit,atexit");
  EXPECT_EQ(stdout_value(run.result.out, "third"), "[]");
  // Its children see GIT_TRACE2_PARENT_SID and _NAME, not GIT_TRACE2_EVENT=memory:.
  EXPECT_EQ(stdout_value(run.result.out, "env"), "2");
  EXPECT_TRUE(run.lines.empty());  // GIT_TRACE2_EVENT's file got nothing
}

// A process's ancestry read another way than the library reads it (its
// /proc/<pid>/stat): the "Name:" and "PPid:" lines of /proc/<pid>/status,
// from `pid` up to the process whose parent is 0, as a JSON array.
std::string ancestry_from_status(pid_t pid) {
  std::string json = "[";
  while (pid > 0) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    std::string name;
    pid = 0;
    while (std::getline(status, line)) {
      if (line.rfind("Name:\t", 0) == 0) {
        name = line.substr(6);
      } else if (line.rfind("PPid:\t", 0) == 0) {
        pid = static_cast<pid_t>(std::stol(line.substr(6)));
      }
    }
    json += (json.size() > 1 ? "," : "") + proto::json_quoted(name);
  }
  return json + "]";
}

TEST(ClientStart, CmdAncestryFollowsStartAndIsWhatGitSendsFromTheSamePlace) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "plain");
  const auto events = events_of(run.lines);
  ASSERT_GE(events.size(), 4U);
  // 1.0 sent no cmd_ancestry; git sends it right after start.
  EXPECT_EQ(std::vector<std::string>(events.begin(), events.begin() + 4),
            (std::vector<std::string>{"version", "start", "cmd_ancestry", "cmd_name"}));
  const auto ours = with_event(run.lines, "cmd_ancestry");
  ASSERT_EQ(ours.size(), 1U);
  EXPECT_EQ(string_field(ours[0], "file"), "trace2d/client");
  // The emitter's parent is this test process: its name, then its ancestors.
  EXPECT_EQ(raw_field(ours[0], "ancestry"), ancestry_from_status(::getpid()));

  // A real git started from the same process has the same ancestors.
  ProcessSpec git;
  git.argv = {"git", "version"};
  git.unset_env = trace_variables();
  git.env = {{"GIT_TRACE2_EVENT", dir.file("git.jsonl")}};
  ASSERT_EQ(run_process(git, std::chrono::seconds(30)).exit_code, 0);
  const auto gits = with_event(read_lines(dir.file("git.jsonl")), "cmd_ancestry");
  ASSERT_EQ(gits.size(), 1U) << "git sends cmd_ancestry on Linux";
  EXPECT_EQ(raw_field(ours[0], "ancestry"), raw_field(gits[0], "ancestry"));
}

TEST(ClientStart, VersionExeIsTheProgramsVersionWhenItGivesOne) {
  TempDir dir;
  const EmitterRun run = run_scenario(dir, "version");
  const auto version = with_event(run.lines, "version");
  ASSERT_EQ(version.size(), 1U);
  // Where git sends its own version (1.0 could only send a name there).
  EXPECT_EQ(string_field(version[0], "exe"), "2.0.1");
  // Without one, as 1.0: Options::exe (client-emitter-c, test_c_abi.cpp),
  // else the program's name.
  TempDir plain_dir;
  const EmitterRun plain = run_scenario(plain_dir, "plain");
  ASSERT_FALSE(plain.lines.empty());
  EXPECT_EQ(string_field(plain.lines.front(), "exe"), "client-emitter-1.1");
}

ProcessSpec emitter_with_target(const std::string& target) {
  ProcessSpec spec;
  spec.argv = {CLIENT_EMITTER_BIN, "plain"};
  for (const auto& name : trace_variables()) {
    spec.unset_env.push_back(name);
  }
  spec.env = {{"GIT_TRACE2_EVENT", target}, {"GIT_TRACE2_DST_DEBUG", "1"}};
  return spec;
}

TEST(ClientTargetsNeverBlock, AFifoWithoutReaderLeavesTracingOffAtOnce) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // 1.0 blocked in open() until a reader came: here, forever.
  const ProcessResult result = run_process(emitter_with_target(fifo), std::chrono::seconds(10));
  ASSERT_FALSE(result.timed_out) << "start() blocked on a FIFO with no reader";
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(stdout_value(result.out, "off_reason").find("FIFO with no reader"), std::string::npos)
      << result.out;
  EXPECT_LT(result.seconds, 5.0);
}

TEST(ClientTargetsNeverBlock, AFifoWithAReaderGetsTheEvents) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  const ProcessResult result = run_process(emitter_with_target(fifo), std::chrono::seconds(10));
  ASSERT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::string got;
  char buffer[4096];
  for (ssize_t n = 0; (n = ::read(reader, buffer, sizeof buffer)) > 0;) {
    got.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(reader);
  EXPECT_NE(got.find("\"event\":\"version\""), std::string::npos) << got;
  EXPECT_NE(got.find("\"event\":\"atexit\""), std::string::npos) << got;
}

TEST(ClientTargetsNeverBlock, ACharacterDeviceTargetWorks) {
  const ProcessResult result =
      run_process(emitter_with_target("/dev/null"), std::chrono::seconds(10));
  ASSERT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(stdout_value(result.out, "sid").empty()) << result.out;
}

}  // namespace
}  // namespace trace2d::test
