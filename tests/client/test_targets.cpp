// Targets that do not work: the program runs normally, writes no events,
// and says no more than git says for the same GIT_TRACE2_EVENT (nothing,
// unless GIT_TRACE2_DST_DEBUG asks, then git's own words).

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/client/client_support.hpp"

namespace trace2d::test {
namespace {

// git's stderr for `git version` with this environment.
std::string git_says(const TempDir& dir, std::map<std::string, std::string> env) {
  ProcessSpec spec;
  spec.argv = {"git", "version"};
  spec.cwd = dir.path().string();
  for (const auto& name : trace_variables()) {
    if (env.count(name) == 0) {
      spec.unset_env.push_back(name);
    }
  }
  env.emplace("GIT_CONFIG_NOSYSTEM", "1");
  env.emplace("GIT_CONFIG_GLOBAL", "/dev/null");
  spec.env = std::move(env);
  const ProcessResult result = run_process(spec);
  EXPECT_EQ(result.exit_code, 0);
  return result.err;
}

struct BadTarget {
  std::string name;
  std::string value;
};

std::vector<BadTarget> bad_targets(const TempDir& dir) {
  return {
      {"missing directory", dir.file("no/such/dir/trace.json")},
      {"missing socket", "af_unix:" + dir.file("missing.sock")},
      {"missing stream socket", "af_unix:stream:" + dir.file("missing.sock")},
      {"missing dgram socket", "af_unix:dgram:" + dir.file("missing.sock")},
      {"socket path that is a file", "af_unix:" + dir.file("plain-file")},
      {"relative path", "relative/trace.json"},
      {"relative socket", "af_unix:stream:relative.sock"},
      {"empty socket path", "af_unix:"},
      {"socket path too long", "af_unix:/" + std::string(120, 'x')},
  };
}

TEST(ClientTargets, MissingTargetsChangeNothingAndSayWhatGitSays) {
  TempDir dir;
  write_file(dir.file("plain-file"), "");
  for (const bool debug : {false, true}) {
    for (const BadTarget& target : bad_targets(dir)) {
      SCOPED_TRACE(target.name + (debug ? " (GIT_TRACE2_DST_DEBUG)" : ""));
      std::map<std::string, std::string> env = {{"GIT_TRACE2_EVENT", target.value}};
      if (debug) {
        env["GIT_TRACE2_DST_DEBUG"] = "1";
      }
      const EmitterRun run =
          run_emitter(dir, CLIENT_EMITTER_BIN, {"all", dir.file("env.txt")}, env);
      EXPECT_EQ(run.result.exit_code, 0);
      EXPECT_TRUE(run.lines.empty());
      EXPECT_EQ(run.sid, "") << "tracing is off";
      EXPECT_EQ(stdout_value(run.result.out, "shell_code"), "3") << "children still run";
      EXPECT_EQ(run.result.err, git_says(dir, env));
      // The child saw no parent SID: tracing off exports nothing.
      EXPECT_EQ(read_file(dir.file("env.txt")).find("GIT_TRACE2_PARENT_SID"), std::string::npos);
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("no")));
}

TEST(ClientTargets, OffValuesTurnTracingOff) {
  TempDir dir;
  for (const std::string value : {"", "0", "false", "FALSE"}) {
    const EmitterRun run =
        run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"}, {{"GIT_TRACE2_EVENT", value}});
    EXPECT_EQ(run.result.exit_code, 0);
    EXPECT_EQ(run.sid, "") << value;
    EXPECT_TRUE(run.result.err.empty()) << value;
  }
}

TEST(ClientTargets, StderrAndDescriptorTargets) {
  TempDir dir;
  const EmitterRun to_stderr =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"}, {{"GIT_TRACE2_EVENT", "1"}});
  EXPECT_NE(to_stderr.result.err.find("\"event\":\"atexit\""), std::string::npos);
  const EmitterRun to_true =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"}, {{"GIT_TRACE2_EVENT", "true"}});
  EXPECT_NE(to_true.result.err.find("\"event\":\"version\""), std::string::npos);
}

TEST(ClientTargets, DirectoryGetsOneFilePerProcessNamedAfterTheSid) {
  TempDir dir;
  const std::string traces = dir.file("traces");
  std::filesystem::create_directories(traces);
  const EmitterRun first =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"}, {{"GIT_TRACE2_EVENT", traces}});
  ASSERT_EQ(first.result.exit_code, 0);
  const std::string leaf = first.sid.substr(first.sid.rfind('/') + 1);
  EXPECT_TRUE(std::filesystem::exists(traces + "/" + leaf)) << leaf;
  EXPECT_EQ(first.lines.size(), 6u);  // version start cmd_ancestry cmd_name exit atexit
  const EmitterRun second =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"}, {{"GIT_TRACE2_EVENT", traces}});
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(traces),
                          std::filesystem::directory_iterator()),
            2);
}

TEST(ClientTargets, TooManyFilesWritesGitsSentinelAndNothingMore) {
  TempDir dir;
  const std::string traces = dir.file("traces");
  std::filesystem::create_directories(traces);
  write_file(traces + "/a", "");
  write_file(traces + "/b", "");
  const std::map<std::string, std::string> env = {{"GIT_TRACE2_EVENT", traces},
                                                  {"GIT_TRACE2_MAX_FILES", "3"}};
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"}, env);
  ASSERT_EQ(run.result.exit_code, 0);
  EXPECT_EQ(run.sid, "");
  const auto lines = read_lines(traces + "/git-trace2-discard");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(string_field(lines[0], "event"), "version");
  EXPECT_EQ(string_field(lines[1], "event"), "too_many_files");
  expect_parser_accepts(lines);
  // While the sentinel exists nobody writes, git included.
  const EmitterRun again = run_emitter(dir, CLIENT_EMITTER_BIN, {"plain"}, env);
  EXPECT_EQ(again.result.exit_code, 0);
  EXPECT_EQ(read_lines(traces).size(), 2u);
  EXPECT_EQ(git_says(dir, env), "");
  EXPECT_EQ(read_lines(traces).size(), 2u);
}

TEST(ClientTargets, AnExplicitTargetIsPassedToChildrenWhenTheEnvironmentHasNone) {
  TempDir dir;
  const std::string target = dir.file("explicit.jsonl");
  const EmitterRun run =
      run_emitter(dir, CLIENT_EMITTER_BIN, {"--target", target, "all", dir.file("env.txt")},
                  {{"GIT_TRACE2_EVENT", ""}});
  ASSERT_EQ(run.result.exit_code, 0);
  EXPECT_FALSE(read_lines(target).empty());
  EXPECT_NE(read_file(dir.file("env.txt")).find("GIT_TRACE2_EVENT=" + target + "\n"),
            std::string::npos);
}

}  // namespace
}  // namespace trace2d::test
