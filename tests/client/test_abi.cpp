// A C program built against an earlier release's header (tests/client/abi/)
// and linked with the current library runs and sends what it sent then.

#include <gtest/gtest.h>

#include "tests/client/client_support.hpp"

namespace trace2d::test {
namespace {

TEST(ClientAbi, AProgramWrittenFor01BuildsLinksAndRunsUnchanged) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_OLD_PROGRAM_0_1_BIN, {});
  ASSERT_EQ(run.result.exit_code, 4) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "enabled"), "1");
  EXPECT_EQ(stdout_value(run.result.out, "child_code"), "0");
  expect_parser_accepts(run.lines);
  std::vector<std::string> events;
  for (const auto& line : run.lines) {
    events.push_back(string_field(line, "event"));
  }
  const std::vector<std::string> expected = {
      "version", "start", "cmd_ancestry", "cmd_name", "cmd_name", "cmd_mode", "def_param",
      "def_repo", "region_enter", "data", "data", "data_json", "region_leave",
      "region_enter", "region_leave",  // a thread started on main is a region, as git's
      "error", "printf", "child_start", "child_exit", "child_start", "child_exit", "exit",
      "th_timer", "timer", "counter", "atexit"};
  EXPECT_EQ(events, expected);
  ASSERT_FALSE(run.lines.empty());
  EXPECT_EQ(string_field(run.lines.front(), "exe"), "old-program 0.1");
  EXPECT_EQ(raw_field(run.lines.back(), "code"), "4");
}

TEST(ClientAbi, AProgramBuiltAgainst10RunsWith11) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_OLD_PROGRAM_1_0_BIN, {});
  ASSERT_EQ(run.result.exit_code, 5) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "enabled"), "1");
  // The data inside "inner" is past the nesting limit: 1.0 said 0, 1.1
  // counts it (issue 28: dropped() counts everything not sent).
  EXPECT_EQ(stdout_value(run.result.out, "dropped"), "1");
  expect_parser_accepts(run.lines);
  std::vector<std::string> story;
  for (const auto& line : run.lines) {
    const std::string event = string_field(line, "event");
    if (event == "region_enter" || event == "region_leave" || event == "data") {
      story.push_back(event + " " + string_field(line, "label") + string_field(line, "value") +
                      " " + raw_field(line, "nesting"));
    }
  }
  // 1.0's guards, in scope order, leave through the 1.0 call (the innermost).
  const std::vector<std::string> expected = {
      "region_enter outer 1", "data 10 2",          "region_enter inner 2",
      "region_leave inner 2", "region_leave outer 1"};
  EXPECT_EQ(story, expected);
  ASSERT_FALSE(run.lines.empty());
  EXPECT_EQ(string_field(run.lines.front(), "exe"), "old-program 1.0");
  EXPECT_EQ(raw_field(run.lines.back(), "code"), "5");
}

// 1.1's trace2d_options is 8 bytes longer than 1.0's (the version field):
// a 1.0 program's trace2d_options_init() must not write past its struct,
// and a 1.1 program's version must be set up and sent.
TEST(ClientAbi, OptionsInitWritesNoMoreThanTheProgramsStruct) {
  TempDir old_dir;
  const EmitterRun old = run_emitter(old_dir, CLIENT_OPTIONS_INIT_1_0_BIN, {});
  ASSERT_EQ(old.result.exit_code, 0) << old.result.err;
  EXPECT_EQ(stdout_value(old.result.out, "canary_ok"), "1") << "written past a 1.0 struct";
  EXPECT_EQ(stdout_value(old.result.out, "struct_size"), "56");
  ASSERT_FALSE(old.lines.empty()) << "a 1.0 struct is accepted";
  EXPECT_EQ(string_field(old.lines.front(), "exe"), "options-init exe");

  TempDir new_dir;
  const EmitterRun now = run_emitter(new_dir, CLIENT_OPTIONS_INIT_BIN, {});
  ASSERT_EQ(now.result.exit_code, 0) << now.result.err;
  EXPECT_EQ(stdout_value(now.result.out, "canary_ok"), "1");
  EXPECT_EQ(stdout_value(now.result.out, "struct_size"), "64");
  ASSERT_FALSE(now.lines.empty());
  EXPECT_EQ(string_field(now.lines.front(), "exe"), "1.1.7") << "version wins over exe";
}

}  // namespace
}  // namespace trace2d::test
