// What the library writes, read back from a trace file: every event type
// parses with trace2d's parser without problems; numbers, times, SIDs,
// escaping, brief mode, the nesting filter, and the environment children get.

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "proto/json_quote.hpp"
#include "tests/client/client_support.hpp"

namespace trace2d::test {
namespace {

EmitterRun run_all(const TempDir& dir, std::map<std::string, std::string> env = {}) {
  EmitterRun run =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"all", dir.file("env.txt")}, std::move(env));
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  return run;
}

std::set<std::string> event_names(const std::vector<std::string>& lines) {
  std::set<std::string> names;
  for (const auto& line : lines) {
    names.insert(string_field(line, "event"));
  }
  return names;
}

TEST(ClientFormat, EveryEventTypeParsesWithoutProblems) {
  TempDir dir;
  const EmitterRun run = run_all(dir);
  expect_parser_accepts(run.lines);
  const std::set<std::string> expected = {
      "version",     "start",        "cmd_ancestry", "cmd_name",     "cmd_mode",    "def_param",
      "def_repo",    "region_enter", "region_leave", "data",         "data_json",   "error",
      "printf",      "child_start",  "child_exit",   "thread_start", "thread_exit", "timer",
      "th_timer",    "counter",      "th_counter",   "exit",         "atexit"};
  EXPECT_EQ(event_names(run.lines), expected);
  for (const auto& line : run.lines) {
    EXPECT_EQ(string_field(line, "sid"), run.sid) << line;
  }
  EXPECT_EQ(string_field(run.lines.front(), "event"), "version");
  EXPECT_EQ(string_field(run.lines.back(), "event"), "atexit");
  EXPECT_EQ(raw_field(run.lines.front(), "evt"), "\"4\"");
}

TEST(ClientFormat, NumbersAndTimesAreFormattedAsGitDoes) {
  TempDir dir;
  const EmitterRun run = run_all(dir);
  const std::regex seconds(R"(\d+\.\d{6})");
  const std::regex integer(R"(-?\d+)");
  const std::regex time(R"("\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")");
  const std::set<std::string> second_keys = {"t_abs", "t_rel", "t_total", "t_min", "t_max"};
  const std::set<std::string> integer_keys = {"line", "repo", "nesting",   "child_id",
                                              "pid",  "code", "intervals", "count"};
  for (const auto& line : run.lines) {
    for (const Field& f : top_level_fields(line)) {
      if (second_keys.count(f.key) != 0) {
        EXPECT_TRUE(std::regex_match(f.raw, seconds)) << f.key << " in " << line;
      } else if (integer_keys.count(f.key) != 0) {
        EXPECT_TRUE(std::regex_match(f.raw, integer)) << f.key << " in " << line;
      } else if (f.key == "time") {
        EXPECT_TRUE(std::regex_match(f.raw, time)) << line;
      }
    }
    EXPECT_EQ(line.find(": "), std::string::npos) << "git writes no spaces: " << line;
  }
}

TEST(ClientFormat, SidHasGitsShapeAndHonoursTheParentPrefix) {
  TempDir dir;
  const EmitterRun top = run_all(dir);
  const std::regex component(R"(\d{8}T\d{6}\.\d{6}Z-H[0-9a-f]{8}-P[0-9a-f]{8})");
  EXPECT_TRUE(std::regex_match(top.sid, component)) << top.sid;

  TempDir child_dir;
  const EmitterRun child = run_all(child_dir, {{"GIT_TRACE2_PARENT_SID", "ci-job 42/step 7"},
                                               {"GIT_TRACE2_PARENT_NAME", "ci/build"}});
  ASSERT_EQ(child.sid.rfind("ci-job 42/step 7/", 0), 0u) << child.sid;
  EXPECT_TRUE(std::regex_match(child.sid.substr(17), component)) << child.sid;
  const auto names = with_event(child.lines, "cmd_name");
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(string_field(names[0], "hierarchy"), "ci/build/client-emitter");
  EXPECT_EQ(string_field(names[1], "hierarchy"), "ci/build/client-emitter/sub");
}

TEST(ClientFormat, ChildrenGetTheSidAndTheNameHierarchy) {
  TempDir dir;
  const EmitterRun run = run_all(dir);
  const std::string env = read_file(dir.file("env.txt"));
  EXPECT_NE(env.find("GIT_TRACE2_PARENT_SID=" + run.sid + "\n"), std::string::npos) << env;
  EXPECT_NE(env.find("GIT_TRACE2_PARENT_NAME=client-emitter/sub\n"), std::string::npos) << env;
}

TEST(ClientFormat, ChildEventsCarryGitsCodes) {
  TempDir dir;
  const EmitterRun run = run_all(dir);
  EXPECT_EQ(stdout_value(run.result.out, "shell_code"), "3");
  const auto starts = with_event(run.lines, "child_start");
  const auto exits = with_event(run.lines, "child_exit");
  ASSERT_EQ(starts.size(), 6u);
  ASSERT_EQ(exits.size(), 6u);
  EXPECT_EQ(raw_field(exits[1], "pid"), "-1");  // /nonexistent/program, as git
  EXPECT_EQ(raw_field(exits[1], "code"), "-1");
  EXPECT_EQ(string_field(starts[2], "child_class"), "hook");
  EXPECT_EQ(string_field(starts[2], "hook_name"), "pre-commit");
  EXPECT_EQ(string_field(starts[3], "cd"), "/");
  EXPECT_EQ(raw_field(starts[4], "use_shell"), "true");
  EXPECT_EQ(raw_field(exits[4], "code"), "3");
  EXPECT_EQ(raw_field(exits[5], "pid"), "4242");
  for (std::size_t i = 0; i < starts.size(); ++i) {
    EXPECT_EQ(raw_field(starts[i], "child_id"), std::to_string(i));
    EXPECT_EQ(raw_field(exits[i], "child_id"), std::to_string(i));
  }
}

TEST(ClientFormat, StringsAreQuotedExactlyAsGitQuotesThem) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"escape"});
  ASSERT_EQ(run.result.exit_code, 0);
  expect_parser_accepts(run.lines);
  const auto data = with_event(run.lines, "data");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(
      raw_field(data[0], "value"),
      proto::json_quoted("quote\" backslash\\ \b\f\n\r\t \x01\x1f \x7f \xff\xfe caf\xc3\xa9"));
  EXPECT_NE(data[0].find(R"("value":"quote\" backslash\\ \b\f\n\r\t \u0001\u001f )"),
            std::string::npos);
  const auto enter = with_event(run.lines, "region_enter");
  ASSERT_EQ(enter.size(), 1u);
  EXPECT_EQ(raw_field(enter[0], "category"), R"("cat\"egory")");
  EXPECT_EQ(raw_field(enter[0], "label"), R"("la\nbel")");
  EXPECT_EQ(raw_field(enter[0], "msg"), R"("m\u0002sg")");
}

TEST(ClientFormat, DataJsonIsCompactedAndInvalidJsonIsNotSent) {
  TempDir dir;
  const EmitterRun run = run_all(dir);
  const auto json = with_event(run.lines, "data_json");
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(raw_field(json[0], "value"),
            R"({"traverse_trees_count":1,"traverse_trees_max_depth":[1,2.5e3,true,null]})");
}

TEST(ClientFormat, BriefModeKeepsTimeOnlyOnVersionAndAtexit) {
  TempDir dir;
  const EmitterRun run = run_all(dir, {{"GIT_TRACE2_EVENT_BRIEF", "true"}});
  expect_parser_accepts(run.lines);
  for (const auto& line : run.lines) {
    const std::string event = string_field(line, "event");
    EXPECT_FALSE(has_field(line, "file")) << line;
    EXPECT_FALSE(has_field(line, "line")) << line;
    EXPECT_EQ(has_field(line, "time"), event == "version" || event == "atexit") << line;
  }
}

TEST(ClientFormat, NestingFilterDropsDeeperRegionsAndTheirData) {
  TempDir dir;
  // Default 2: the inner region (nesting 2) is sent, data inside it (3) is not.
  const EmitterRun normal = run_emitter(dir, CLIENT_EMITTER_BIN, {"threads", "1", "3"});
  EXPECT_EQ(with_event(normal.lines, "region_enter").size(), 6u);
  EXPECT_EQ(with_event(normal.lines, "data").size(), 0u);
  TempDir shallow_dir;
  const EmitterRun shallow = run_emitter(shallow_dir, CLIENT_EMITTER_BIN, {"threads", "1", "3"},
                                         {{"GIT_TRACE2_EVENT_NESTING", "1"}});
  EXPECT_EQ(with_event(shallow.lines, "region_enter").size(), 3u);
  EXPECT_EQ(with_event(shallow.lines, "region_leave").size(), 3u);
  TempDir deep_dir;
  const EmitterRun deep = run_emitter(deep_dir, CLIENT_EMITTER_BIN, {"threads", "1", "3"},
                                      {{"GIT_TRACE2_EVENT_NESTING", "5"}});
  const auto data = with_event(deep.lines, "data");
  ASSERT_EQ(data.size(), 3u);
  EXPECT_EQ(raw_field(data[0], "nesting"), "3");
}

TEST(ClientFormat, TimersAndCountersAsGitAddsThem) {
  TempDir dir;
  const EmitterRun run = run_all(dir);
  const auto th_timers = with_event(run.lines, "th_timer");
  ASSERT_EQ(th_timers.size(), 2u);  // the helper thread's, then main's at exit
  EXPECT_EQ(string_field(th_timers[0], "thread"), "th01:helper");
  EXPECT_EQ(raw_field(th_timers[0], "intervals"), "1");
  EXPECT_EQ(string_field(th_timers[1], "thread"), "main");
  EXPECT_EQ(raw_field(th_timers[1], "intervals"), "2");
  const auto timers = with_event(run.lines, "timer");
  ASSERT_EQ(timers.size(), 1u);
  EXPECT_EQ(raw_field(timers[0], "intervals"), "3");
  const auto counters = with_event(run.lines, "counter");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(string_field(counters[0], "name"), "ticks");
  EXPECT_EQ(raw_field(counters[0], "count"), "5");
  EXPECT_EQ(raw_field(counters[1], "count"), "5");
  EXPECT_EQ(with_event(run.lines, "th_counter").size(), 2u);
}

}  // namespace
}  // namespace trace2d::test
