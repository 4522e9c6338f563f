// The C ABI, from a program compiled as C99 (tests/client/emitter_c.c):
// the same events, through the same implementation.

#include <gtest/gtest.h>

#include "tests/client/client_support.hpp"

namespace trace2d::test {
namespace {

TEST(ClientCAbi, CProgramEmitsEveryKindOfEvent) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_C_BIN, {"arg"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(stdout_value(run.result.out, "enabled"), "1");
  EXPECT_EQ(stdout_value(run.result.out, "child_code"), "0");
  expect_parser_accepts(run.lines);

  const auto version = with_event(run.lines, "version");
  ASSERT_EQ(version.size(), 1u);
  EXPECT_EQ(string_field(version[0], "exe"), "client-emitter-c 1.0");
  EXPECT_NE(string_field(version[0], "file").find("emitter_c.c"), std::string::npos);
  EXPECT_EQ(
      raw_field(with_event(run.lines, "start").at(0), "argv").find("\"arg\"") != std::string::npos,
      true);
  EXPECT_EQ(string_field(with_event(run.lines, "cmd_name").at(0), "name"), "client-emitter-c");
  EXPECT_EQ(string_field(with_event(run.lines, "cmd_mode").at(0), "name"), "c-mode");
  EXPECT_EQ(string_field(with_event(run.lines, "def_param").at(0), "value"), "value");
  EXPECT_EQ(raw_field(with_event(run.lines, "def_repo").at(0), "repo"), "1");

  const auto error = with_event(run.lines, "error");
  ASSERT_EQ(error.size(), 1u);
  EXPECT_EQ(string_field(error[0], "msg"), "failed 3 times");
  EXPECT_EQ(string_field(error[0], "fmt"), "failed %d times");
  EXPECT_EQ(string_field(with_event(run.lines, "printf").at(0), "msg"), "hello printf");

  const auto data = with_event(run.lines, "data");
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(string_field(data[1], "value"), "42");
  EXPECT_EQ(raw_field(with_event(run.lines, "data_json").at(0), "value"), R"({"a":[1,2]})");

  const auto thread_start = with_event(run.lines, "thread_start");
  ASSERT_EQ(thread_start.size(), 1u);
  EXPECT_EQ(string_field(thread_start[0], "thread"), "th01:c-worker");
  EXPECT_EQ(with_event(run.lines, "thread_exit").size(), 1u);
  EXPECT_EQ(with_event(run.lines, "th_timer").size(), 1u);
  EXPECT_EQ(with_event(run.lines, "timer").size(), 1u);
  EXPECT_EQ(raw_field(with_event(run.lines, "counter").at(0), "count"), "2");

  const auto child_start = with_event(run.lines, "child_start");
  ASSERT_EQ(child_start.size(), 2u);
  EXPECT_EQ(string_field(child_start[0], "child_class"), "c-child");
  EXPECT_EQ(string_field(child_start[1], "child_class"), "?");
  const auto child_exit = with_event(run.lines, "child_exit");
  ASSERT_EQ(child_exit.size(), 2u);
  EXPECT_EQ(raw_field(child_exit[1], "pid"), "1234");
  EXPECT_EQ(raw_field(child_exit[1], "code"), "0");
  EXPECT_EQ(string_field(run.lines.back(), "event"), "atexit");
}

TEST(ClientCAbi, CProgramRunsNormallyWithoutTracing) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_C_BIN, {}, {{"GIT_TRACE2_EVENT", "0"}});
  EXPECT_EQ(run.result.exit_code, 0);
  EXPECT_EQ(stdout_value(run.result.out, "enabled"), "0");
  EXPECT_EQ(stdout_value(run.result.out, "child_code"), "0");
}

}  // namespace
}  // namespace trace2d::test
