// Golden tests: the library's lines against real git output. Each line is
// reduced to its shape, the keys in order with the kind of each value
// (string, integer, six-decimal seconds, bool, array, object); values that
// must differ (sid, time, file, line, durations) are ignored. An event type
// the captured git 2.39.5 traces hold must match one of git's shapes
// exactly; the others (not sent by that git or by those commands) must
// match the shape git's trace2/tr2_tgt_event.c (v2.47) writes, listed here.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "tests/client/client_support.hpp"

namespace trace2d::test {
namespace {

using Shape = std::vector<std::string>;

std::string value_kind(const std::string& raw) {
  static const std::regex seconds(R"(-?\d+\.\d{6})");
  static const std::regex integer(R"(-?\d+)");
  if (raw.empty()) {
    return "missing";
  }
  switch (raw.front()) {
    case '"': return "string";
    case '[': return "array";
    case '{': return "object";
    default: break;
  }
  if (raw == "true" || raw == "false") {
    return "bool";
  }
  if (std::regex_match(raw, seconds)) {
    return "seconds";
  }
  return std::regex_match(raw, integer) ? "integer" : "other:" + raw;
}

Shape shape_of(const std::string& line) {
  Shape shape;
  for (const Field& f : top_level_fields(line)) {
    shape.push_back(f.key + "=" + value_kind(f.raw));
  }
  return shape;
}

std::string describe(const Shape& shape) {
  std::string out;
  for (const auto& s : shape) {
    out += s + " ";
  }
  return out;
}

// Every shape per event type in the captured git traces.
const std::map<std::string, std::set<Shape>>& git_shapes() {
  static const auto shapes = [] {
    std::map<std::string, std::set<Shape>> out;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(TRACE2D_TEST_DATA) + "/traces")) {
      for (const auto& line : read_lines(entry.path().string())) {
        if (line.find("\"event\":\"") != std::string::npos) {
          out[string_field(line, "event")].insert(shape_of(line));
        }
      }
    }
    return out;
  }();
  return shapes;
}

// Shapes of events the corpus lacks, from git's tr2_tgt_event.c.
Shape source_shape(const std::vector<std::string>& own, bool brief) {
  Shape shape = {"event=string", "sid=string", "thread=string"};
  if (!brief) {
    shape.insert(shape.end(), {"time=string", "file=string", "line=integer"});
  }
  for (const auto& field : own) {
    shape.push_back(field);
  }
  return shape;
}

const std::map<std::string, std::vector<std::vector<std::string>>>& source_fields() {
  static const std::map<std::string, std::vector<std::vector<std::string>>> fields = {
      {"def_param",
       {{"param=string", "value=string"}, {"scope=string", "param=string", "value=string"}}},
      {"thread_start", {{}}},
      {"too_many_files", {{}}},
      {"thread_exit", {{"t_rel=seconds"}}},
      {"timer",
       {{"category=string", "name=string", "intervals=integer", "t_total=seconds", "t_min=seconds",
         "t_max=seconds"}}},
      {"th_timer",
       {{"category=string", "name=string", "intervals=integer", "t_total=seconds", "t_min=seconds",
         "t_max=seconds"}}},
      {"counter", {{"category=string", "name=string", "count=integer"}}},
      {"th_counter", {{"category=string", "name=string", "count=integer"}}},
      {"printf", {{"t_abs=seconds", "msg=string"}}},
      {"signal", {{"t_abs=seconds", "signo=integer"}}},
      {"child_start",
       {{"child_id=integer", "child_class=string", "cd=string", "use_shell=bool", "argv=array"}}},
  };
  return fields;
}

// git's brief mode only drops common fields (event_fmt_prepare()): "file"
// and "line" everywhere, "time" except on version and atexit.
Shape brief_shape(const std::string& event, const Shape& full) {
  Shape out;
  const bool keep_time = event == "version" || event == "atexit";
  for (const auto& field : full) {
    const std::string key = field.substr(0, field.find('='));
    if (key != "file" && key != "line" && (key != "time" || keep_time)) {
      out.push_back(field);
    }
  }
  return out;
}

bool in_corpus(const std::string& event, const Shape& shape, bool brief) {
  const auto found = git_shapes().find(event);
  if (found == git_shapes().end()) {
    return false;
  }
  for (const Shape& git : found->second) {
    if ((brief ? brief_shape(event, git) : git) == shape) {
      return true;
    }
  }
  return false;
}

void expect_git_shapes(const std::vector<std::string>& lines, bool brief) {
  ASSERT_FALSE(lines.empty());
  for (const auto& line : lines) {
    const std::string event = string_field(line, "event");
    const Shape shape = shape_of(line);
    if (in_corpus(event, shape, brief)) {
      continue;
    }
    const auto in_corpus = git_shapes().find(event);
    bool matched = false;
    if (const auto known = source_fields().find(event); known != source_fields().end()) {
      for (const auto& own : known->second) {
        matched = matched || source_shape(own, brief) == shape;
      }
    }
    std::string git_side;
    if (in_corpus != git_shapes().end()) {
      for (const auto& s : in_corpus->second) {
        git_side += "\n  git: " + describe(s);
      }
    }
    EXPECT_TRUE(matched) << "no git line has the shape of\n  ours: " << describe(shape) << git_side
                         << "\n  line: " << line;
  }
}

TEST(ClientGolden, EveryLineHasTheShapeOfAGitLine) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"all", dir.file("env.txt")});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  expect_git_shapes(run.lines, false);
}

TEST(ClientGolden, BriefLinesHaveTheShapeOfGitsBriefLines) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"all", dir.file("env.txt")},
                                     {{"GIT_TRACE2_EVENT_BRIEF", "1"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  expect_git_shapes(run.lines, true);
}

TEST(ClientGolden, SignalEventHasGitsShape) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"sigpipe"});
  EXPECT_EQ(run.result.term_signal, SIGPIPE);
  expect_git_shapes(run.lines, false);
  ASSERT_FALSE(run.lines.empty());
  EXPECT_EQ(string_field(run.lines.back(), "event"), "signal");
}

TEST(ClientGolden, TooManyFilesSentinelHasGitsShapes) {
  TempDir dir;
  write_file(dir.path() / "a", "");
  const EmitterRun run =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"},
                  {{"GIT_TRACE2_EVENT", dir.path().string()}, {"GIT_TRACE2_MAX_FILES", "2"}});
  ASSERT_EQ(run.result.exit_code, 0);
  expect_git_shapes(read_lines(dir.file("git-trace2-discard")), false);
}

TEST(ClientGolden, GitsOwnLinesPassTheComparison) {
  // The comparison itself: a real git line of each kind matches.
  for (const auto& [event, shapes] : git_shapes()) {
    EXPECT_FALSE(shapes.empty()) << event;
  }
  EXPECT_GE(git_shapes().size(), 15u);
  EXPECT_EQ(value_kind("0.000418"), "seconds");
  EXPECT_EQ(value_kind("1"), "integer");
  EXPECT_EQ(value_kind("\"x\""), "string");
}

}  // namespace
}  // namespace trace2d::test
