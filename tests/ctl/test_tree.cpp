// trace2ctl tree against real git traces imported by the real trace2d.
//
// The imported times come from the captured files, so whole outputs are
// stable and compared with golden files (tests/ctl/golden/).

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <string>

#include "tests/ctl/imported_traces.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

ProcessResult tree(std::vector<std::string> args) {
  args.insert(args.begin(), {"--db", imported_traces_db(), "tree"});
  return run_ctl(args);
}

std::string line_with(const std::string& text, const std::string& part) {
  for (const std::string& line : split_lines(text)) {
    if (line.find(part) != std::string::npos) {
      return line;
    }
  }
  return {};
}

TEST(Trace2ctlTree, FetchMatchesGolden) {
  const ProcessResult result = tree({k_fetch_sid});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  expect_golden(result.out, "tree_fetch.txt");
}

TEST(Trace2ctlTree, FetchChildrenSitUnderTheirChildStartAtTheirTimes) {
  const ProcessResult result = tree({k_fetch_sid});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // git started upload-pack (through a shell) inside fetch:remote_refs,
  // 1.290 ms after fetch began; it ran 21.277 ms, outliving the region.
  EXPECT_EQ(line_with(result.out, "remote_refs"), "   1.255       3.048  ├─ fetch:remote_refs");
  EXPECT_EQ(line_with(result.out, "child 0 transport/file"),
            "   1.290      21.277  │  └─ child 0 transport/file: git-upload-pack '/tmp/t2d-capture-EENcx1/upstream'"
            "  [shell, pid 5387, exit 0]");
  // The upload-pack process (pid 5388: the shell's child) under it, and
  // its pack-objects under upload-pack's own child_start.
  EXPECT_EQ(line_with(result.out, "upload-pack  ["), "   3.259      11.849  │     └─ upload-pack  [pid 5388, exit 0]");
  EXPECT_EQ(line_with(result.out, "pack-objects  ["),
            "   7.208       7.435  │           └─ pack-objects  [pid 5390, exit 0]");
  // unpack-objects inside fetch_refs, rev-list inside consume_refs.
  const auto lines = split_lines(result.out);
  const auto at = [&](const std::string& part) {
    return std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; }) -
           lines.begin();
  };
  EXPECT_LT(at("fetch:fetch_refs"), at("child 1: git unpack-objects"));
  EXPECT_LT(at("child 1: git unpack-objects"), at("fetch:consume_refs"));
  EXPECT_LT(at("fetch:consume_refs"), at("child 2: git rev-list"));
  EXPECT_EQ(line_with(result.out, "unpack-objects  ["),
            "  16.008       6.148  │     └─ unpack-objects  [pid 5392, exit 0]");
}

TEST(Trace2ctlTree, HookAliasAndCloneWithoutTimesMatchGolden) {
  for (const auto& [sid, file] : {std::pair{k_commit_sid, "tree_hook_commit.txt"},
                                  std::pair{k_shell_alias_sid, "tree_alias_shell.txt"},
                                  std::pair{k_clone_sid, "tree_clone.txt"}}) {
    const ProcessResult result = tree({sid, "--no-times"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    expect_golden(result.out, file);
  }
}

TEST(Trace2ctlTree, TheHookScriptsGitRunsUnderTheHook) {
  // The pre-commit hook is a shell script: git knows its pid, not the pid
  // of the `git rev-parse` it ran, so that session hangs under the hook's
  // child_start by time, with its own argv (the child line shows the script).
  const ProcessResult result = tree({k_commit_sid, "--no-times"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("├─ hook:pre-commit  max:1\n"
                            "│  └─ child 0 hook pre-commit: .git/hooks/pre-commit  [pid 5459, exit 0]\n"
                            "│     └─ rev-parse  git rev-parse HEAD  [pid 5460, exit 0]\n"),
            std::string::npos)
      << result.out;
}

TEST(Trace2ctlTree, ASidPrefixShowsEverySessionUnderIt) {
  const ProcessResult result = tree({k_parent_sid_prefix, "--no-times", "--sids"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = split_lines(result.out);
  ASSERT_EQ(lines.size(), 2u) << result.out;
  EXPECT_EQ(lines[0], "ci-job 42  [1 process under this SID prefix]");
  EXPECT_EQ(lines[1].rfind("└─ rev-parse  git rev-parse HEAD  [pid 5475, exit 0]  ci-job 42/step 7/", 0), 0u)
      << lines[1];
  // As GIT_TRACE2_PARENT_SID is often written, with a trailing slash.
  EXPECT_EQ(tree({"ci-job 42/step 7/", "--no-times", "--sids"}).out,
            "ci-job 42/step 7  [1 process under this SID prefix]\n" + lines[1] + "\n");
}

// A session of 300,000 children took 48 s and 489 MB to show whole: of
// each session, tree reads what began within its first --max-events, and
// says what it left out.
TEST(Trace2ctlTree, OfAHugeSessionItShowsTheFirstEventsAndSaysHowManyItLeftOut) {
  const ProcessResult whole = tree({k_fetch_sid, "--max-events", "0"});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(whole.out.find("later events not read"), std::string::npos);
  EXPECT_EQ(tree({k_fetch_sid}).out, whole.out) << "the default bound is far above a real git's events";

  const ProcessResult cut = tree({k_fetch_sid, "--max-events", "10"});
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  const std::string note = line_with(cut.out, "later events not read");
  EXPECT_NE(note.find("--max-events 0 reads them all"), std::string::npos) << cut.out;
  EXPECT_LT(split_lines(cut.out).size(), split_lines(whole.out).size());
  EXPECT_EQ(line_with(cut.out, "fetch:consume_refs"), "") << "began after the fetch's tenth event";

  const ProcessResult json = tree({"--json", k_fetch_sid, "--max-events", "10"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  simdjson::dom::parser parser;
  const simdjson::dom::element top = parser.parse(json.out)["processes"].at(0);
  EXPECT_GT(top["events_left_out"].get_int64().value(), 10);
  const ProcessResult whole_json = tree({"--json", k_fetch_sid});
  EXPECT_EQ(whole_json.out.find("events_left_out"), std::string::npos);
}

TEST(Trace2ctlTree, UnknownSidFails) {
  const ProcessResult result = tree({"no-such-sid"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("no session with sid 'no-such-sid'"), std::string::npos) << result.err;
  // A prefix must end at a '/': "ci-job" is not a prefix of "ci-job 42/...".
  EXPECT_EQ(tree({"ci-job"}).exit_code, 1);
}

TEST(Trace2ctlTree, DepthRegionDepthAndMinimumPrune) {
  const ProcessResult depth0 = tree({k_fetch_sid, "--no-times", "--depth", "0", "--region-depth", "0"});
  ASSERT_EQ(depth0.exit_code, 0) << depth0.err;
  EXPECT_EQ(depth0.out,
            "fetch  git fetch --no-auto-gc origin  [pid 5386, exit 0]\n"
            "├─ child 0 transport/file: git-upload-pack '/tmp/t2d-capture-EENcx1/upstream'  [shell, pid 5387, exit 0]\n"
            "├─ child 1: git unpack-objects -q --pack_header=2,40  [pid 5392, exit 0]\n"
            "└─ child 2: git rev-list --objects --stdin --not --all --quiet --alternate-refs  [pid 5393, exit 0]\n");

  const ProcessResult slow = tree({k_fetch_sid, "--no-times", "--min-ms", "5"});
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_EQ(slow.out,
            "fetch  git fetch --no-auto-gc origin  [pid 5386, exit 0]\n"
            "├─ fetch:remote_refs\n"
            "│  └─ child 0 transport/file: git-upload-pack '/tmp/t2d-capture-EENcx1/upstream'  [shell, pid 5387, exit 0]\n"
            "│     └─ upload-pack  [pid 5388, exit 0]\n"
            "│        └─ child 0: git pack-objects --revs --thin --stdout --delta-base-offset --include-tag  [pid 5390, exit 0]\n"
            "│           └─ pack-objects  [pid 5390, exit 0]\n"
            "├─ fetch:fetch_refs\n"
            "│  └─ child 1: git unpack-objects -q --pack_header=2,40  [pid 5392, exit 0]\n"
            "│     └─ unpack-objects  [pid 5392, exit 0]\n"
            "└─ fetch:consume_refs\n")
      << "remote_refs (3 ms) stays for the 21 ms child it started";
}

TEST(Trace2ctlTree, BriefModeRegionsHaveNoStart) {
  // status_brief.jsonl: GIT_TRACE2_EVENT_BRIEF drops the times of events.
  const ProcessResult result = tree({"20261122T000429.553282Z-H0a7c9cdf-P000014da"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(line_with(result.out, "index:do_read_index"), "               0.329  ├─ index:do_read_index  .git/index");
}

TEST(Trace2ctlTree, JsonNestsProcessesUnderTheirChildEntries) {
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "--json", "tree", k_fetch_sid});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::object doc;
  ASSERT_EQ(parser.parse(result.out).get(doc), simdjson::SUCCESS) << result.out;
  EXPECT_EQ(std::string_view(doc["root"].get_string().value()), k_fetch_sid);
  EXPECT_EQ(std::string_view(doc["origin_time"].get_string().value()), "2026-11-22T00:04:29.650974Z");
  simdjson::dom::array processes = doc["processes"].get_array().value();
  ASSERT_EQ(processes.size(), 1u);
  simdjson::dom::object fetch = processes.at(0).get_object().value();
  EXPECT_EQ(std::string_view(fetch["type"].get_string().value()), "process");
  EXPECT_EQ(std::string_view(fetch["cmd_name"].get_string().value()), "fetch");
  EXPECT_EQ(std::string_view(fetch["placed_by"].get_string().value()), "root");
  EXPECT_EQ(fetch["pid"].get_int64().value(), 5386);
  EXPECT_DOUBLE_EQ(fetch["elapsed"].get_double().value(), 0.028);
  EXPECT_EQ(fetch["argv"].get_array().value().size(), 4u);
  EXPECT_TRUE(fetch["reason"].is_null()) << "it succeeded";

  // entries[1] is fetch:remote_refs; its only entry, child 0; under it, upload-pack.
  simdjson::dom::object remote_refs = fetch["entries"].get_array().value().at(1).get_object().value();
  EXPECT_EQ(std::string_view(remote_refs["type"].get_string().value()), "region");
  EXPECT_EQ(std::string_view(remote_refs["label"].get_string().value()), "remote_refs");
  EXPECT_DOUBLE_EQ(remote_refs["offset"].get_double().value(), 0.001255);
  simdjson::dom::object child = remote_refs["entries"].get_array().value().at(0).get_object().value();
  EXPECT_EQ(std::string_view(child["type"].get_string().value()), "child");
  EXPECT_EQ(child["child_id"].get_int64().value(), 0);
  EXPECT_EQ(std::string_view(child["child_class"].get_string().value()), "transport/file");
  EXPECT_TRUE(child["use_shell"].get_bool().value());
  EXPECT_EQ(child["pid"].get_int64().value(), 5387);
  EXPECT_DOUBLE_EQ(child["elapsed"].get_double().value(), 0.021277);
  EXPECT_EQ(std::string_view(child["child_sid"].get_string().value()), k_upload_pack_sid);
  simdjson::dom::object upload_pack = child["entries"].get_array().value().at(0).get_object().value();
  EXPECT_EQ(std::string_view(upload_pack["sid"].get_string().value()), k_upload_pack_sid);
  EXPECT_EQ(std::string_view(upload_pack["placed_by"].get_string().value()), "child_sid");
  EXPECT_DOUBLE_EQ(upload_pack["offset"].get_double().value(), 0.003259);
}

// failing_command.jsonl: `git checkout no-such-branch`, exit code 1 after an
// error event. The JSON tree says why, in the words of the text tree.
TEST(Trace2ctlTree, JsonSaysWhyAProcessFailedAsTheTextTreeDoes) {
  const std::string sid = "20261122T000430.470748Z-H0a7c9cdf-P000015d9";
  const std::string reason = "pathspec 'no-such-branch' did not match any file(s) known to git";
  const ProcessResult text = tree({sid});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(" + reason + ")"), std::string::npos) << text.out;
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "--json", "tree", sid});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::object doc;
  ASSERT_EQ(parser.parse(result.out).get(doc), simdjson::SUCCESS) << result.out;
  simdjson::dom::object checkout = doc["processes"].get_array().value().at(0).get_object().value();
  EXPECT_EQ(checkout["exit_code"].get_int64().value(), 1);
  EXPECT_EQ(std::string_view(checkout["reason"].get_string().value()), reason);
  // Regions have no reason: only processes fail with one.
  simdjson::dom::object region = checkout["entries"].get_array().value().at(0).get_object().value();
  EXPECT_EQ(std::string_view(region["type"].get_string().value()), "region");
  EXPECT_EQ(region["reason"].error(), simdjson::NO_SUCH_FIELD);
}

}  // namespace
}  // namespace trace2d::test
