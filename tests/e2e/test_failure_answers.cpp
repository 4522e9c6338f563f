// Why a run failed, said alike by every answer: real git failing in the
// ways that leave the least behind (stopped before naming its command,
// failing through the git an alias ran, dying with a child still open),
// through a real trace2d, asked through trace2ctl.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

class FailureAnswers : public ::testing::Test {
 protected:
  void SetUp() override {
    m_repo = make_repo(m_dir, "app", 3);
    ASSERT_EQ(run_git(m_repo, {"config", "alias.co", "checkout"}).exit_code, 0);  // untraced
    m_daemon = std::make_unique<RunningDaemon>(m_dir);
    const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", m_daemon->git_target()}};
    const auto git = [&](const std::vector<std::string>& args, int code) {
      const ProcessResult r = run_git(m_repo, args, trace);
      EXPECT_EQ(r.exit_code, code) << "git " << args.back() << ": " << r.err;
    };
    const std::string nowhere = (m_dir.path() / "nowhere").string();
    git({"-C", nowhere, "status"}, 128);                                    // "cannot change to": no cmd_name
    git({"--git-dir=" + (m_dir.path() / "nope").string(), "status"}, 128);  // "not a git repository": no cmd_name
    git({"status"}, 0);
    git({"co", "nosuch"}, 1);  // the alias's checkout says why
    // fetch dies in die() inside a region, its transport child never
    // reported as exited; the child's own git (upload-pack) fails too.
    git({"fetch", "-q", "file://" + (m_dir.path() / "missing.git").string()}, 128);
    // Five the user ran, the alias's checkout and fetch's upload-pack.
    ASSERT_TRUE(wait_for_sessions(db(), 7));
  }

  [[nodiscard]] const std::string& db() const { return m_daemon->db_path(); }

  simdjson::dom::element json(simdjson::dom::parser& parser, const std::vector<std::string>& args) {
    const ProcessResult r = ctl(db(), args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
    return doc;
  }

  TempDir m_dir;
  std::string m_repo;
  std::unique_ptr<RunningDaemon> m_daemon;
};

// A string field's value; empty when it is absent (a root span's parent).
std::string text(simdjson::simdjson_result<simdjson::dom::element> value) {
  std::string_view s;
  return value.get_string().get(s) == simdjson::SUCCESS ? std::string(s) : std::string();
}

// A git that stopped at its options or its repository never named the
// command: it is still the `status` the user typed, listed, counted and
// failed as one.
TEST_F(FailureAnswers, AGitStoppedBeforeNamingItsCommandCountsAsWhatTheUserTyped) {
  simdjson::dom::parser parser;
  const simdjson::dom::element failed = json(parser, {"--format", "json", "sessions", "--cmd", "status", "--failed"});
  std::vector<std::string> reasons;
  for (simdjson::dom::element row : failed.get_array()) {
    EXPECT_EQ(text(row["command"]), "status");
    reasons.push_back(text(row["reason"]));
  }
  std::sort(reasons.begin(), reasons.end());
  ASSERT_EQ(reasons.size(), 2U) << simdjson::minify(failed);
  EXPECT_TRUE(reasons[0].starts_with("cannot change to")) << reasons[0];
  EXPECT_TRUE(reasons[1].starts_with("not a git repository")) << reasons[1];

  simdjson::dom::parser stats_parser;
  const simdjson::dom::element stats = json(stats_parser, {"--format", "json", "stats"});
  bool found = false;
  for (simdjson::dom::element row : stats.get_array()) {
    if (text(row["command"]) == "status") {
      found = true;
      EXPECT_EQ(row["runs"].get_int64().value(), 3) << simdjson::minify(row);
      EXPECT_EQ(row["failures"].get_int64().value(), 2) << simdjson::minify(row);
    }
  }
  EXPECT_TRUE(found) << simdjson::minify(stats);
  // Grouped by anything else, no run goes missing either.
  simdjson::dom::parser by_uid_parser;
  const simdjson::dom::element by_uid = json(by_uid_parser, {"--format", "json", "stats", "--by", "uid"});
  std::int64_t runs = 0;
  std::int64_t failures = 0;
  for (simdjson::dom::element row : by_uid.get_array()) {
    runs += row["runs"].get_int64().value();
    failures += row["failures"].get_int64().value();
  }
  EXPECT_EQ(runs, 5) << simdjson::minify(by_uid);
  EXPECT_EQ(failures, 4) << simdjson::minify(by_uid);
}

// An alias reports no error itself; the checkout it ran does. The tree's
// top line says why in the words `sessions --failed` uses.
TEST_F(FailureAnswers, TheTreeOfAFailedAliasSaysWhyAsTheListingDoes) {
  simdjson::dom::parser parser;
  const simdjson::dom::element failed = json(parser, {"--format", "json", "sessions", "--cmd", "co", "--failed"});
  ASSERT_EQ(failed.get_array().size(), 1U) << simdjson::minify(failed);
  const std::string reason = text(failed.at(0)["reason"]);
  EXPECT_NE(reason.find("pathspec 'nosuch' did not match"), std::string::npos) << reason;

  simdjson::dom::parser tree_parser;
  const simdjson::dom::element tree = json(tree_parser, {"--format", "json", "tree", "--last", "--cmd", "co"});
  EXPECT_EQ(text(tree["processes"].at(0)["reason"]), reason) << simdjson::minify(tree);
  const ProcessResult lines = ctl(db(), {"tree", "--last", "--cmd", "co"});
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  const std::string top = lines.out.substr(0, lines.out.find('\n', lines.out.find("_run_git_alias_")));
  EXPECT_NE(top.find("(" + reason + ")"), std::string::npos) << lines.out;
}

// fetch died with its transport child open: that child is not shown
// running, and its span and its region's end with the process that held
// them (not at their start), so the child's git starts inside them, as in
// the Chrome export. (That git may end a little after fetch: it outlives
// the git that died, and its span is its own.)
TEST_F(FailureAnswers, AChildOfAGitThatDiedIsNotRunningAndItsSpanLastsToItsProcesssEnd) {
  const ProcessResult lines = ctl(db(), {"tree", "--last", "--cmd", "fetch"});
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  EXPECT_NE(lines.out.find("transport/file"), std::string::npos) << lines.out;
  EXPECT_NE(lines.out.find("no exit recorded"), std::string::npos) << lines.out;
  EXPECT_EQ(lines.out.find("running"), std::string::npos) << lines.out;

  simdjson::dom::parser parser;
  const simdjson::dom::element otlp = json(parser, {"export", "--format", "otlp-json", "--last", "--cmd", "fetch"});
  struct Times {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::string parent;
    std::string name;
  };
  std::map<std::string, Times> spans;
  for (simdjson::dom::element resource : otlp["resourceSpans"].get_array()) {
    for (simdjson::dom::element scope : resource["scopeSpans"].get_array()) {
      for (simdjson::dom::element span : scope["spans"].get_array()) {
        spans[text(span["spanId"])] = {std::stoull(text(span["startTimeUnixNano"])),
                                       std::stoull(text(span["endTimeUnixNano"])), text(span["parentSpanId"]),
                                       text(span["name"])};
      }
    }
  }
  const auto named = [&](const std::string& prefix) -> const Times* {
    for (const auto& [id, span] : spans) {
      if (span.name.starts_with(prefix)) {
        return &span;
      }
    }
    return nullptr;
  };
  const Times* fetch = named("git:fetch");
  const Times* child = named("child(class:transport/file)");
  const Times* upload_pack = named("git-upload-pack");
  ASSERT_TRUE(fetch != nullptr && child != nullptr && upload_pack != nullptr) << simdjson::minify(otlp);
  EXPECT_EQ(child->end, fetch->end);
  EXPECT_GT(child->end, child->start);
  ASSERT_EQ(spans.count(child->parent), 1U);
  const Times& region = spans.at(child->parent);
  EXPECT_TRUE(region.name.starts_with("region(")) << region.name;
  EXPECT_EQ(region.end, fetch->end);
  EXPECT_GE(upload_pack->start, child->start);
  EXPECT_LT(upload_pack->start, child->end);
}

}  // namespace
}  // namespace trace2d::test
