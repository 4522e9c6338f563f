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
      "version", "start", "cmd_name", "cmd_name", "cmd_mode", "def_param", "def_repo",
      "region_enter", "data", "data", "data_json", "region_leave",
      "region_enter", "region_leave",  // a thread started on main is a region, as git's
      "error", "printf", "child_start", "child_exit", "child_start", "child_exit", "exit",
      "th_timer", "timer", "counter", "atexit"};
  EXPECT_EQ(events, expected);
  ASSERT_FALSE(run.lines.empty());
  EXPECT_EQ(string_field(run.lines.front(), "exe"), "old-program 0.1");
  EXPECT_EQ(raw_field(run.lines.back(), "code"), "4");
}

}  // namespace
}  // namespace trace2d::test
