// The analysis commands (tree, top, stats, export, report) on a fresh
// `git fetch` traced into a running trace2d, read while the daemon still
// holds the database open (WAL, read-only connection).

#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <string>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

// The first node (depth first) of `type` whose `key` starts with `prefix`,
// with its parent node.
struct Found {
  simdjson::dom::object node;
  simdjson::dom::object parent;
  bool found = false;
};

void find_node(simdjson::dom::object parent, const std::string& type, const std::string& prefix, Found& out) {
  const simdjson::dom::array entries = parent["entries"].get_array().value();
  for (simdjson::dom::element entry : entries) {
    if (out.found) {
      return;
    }
    simdjson::dom::object node = entry.get_object().value();
    if (std::string_view(node["type"].get_string().value()) == type) {
      simdjson::dom::array argv;
      if (node["argv"].get(argv) == simdjson::SUCCESS && argv.size() > 0 &&
          std::string(argv.at(0).get_string().value()).rfind(prefix, 0) == 0) {
        out = {node, parent, true};
        return;
      }
    }
    find_node(node, type, prefix, out);
  }
}

TEST(Reports, AnalysisOfALiveFetch) {
  TempDir dir;
  const std::string clone = clone_behind(dir);
  RunningDaemon daemon(dir);
  const ProcessResult fetch = run_git(
      clone, {"fetch", "--no-auto-gc", "origin"},
      {{"GIT_TRACE2_EVENT", daemon.git_target()}, {"GIT_TRACE2_EVENT_NESTING", "5"}});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;

  // git has exited; trace2d commits within milliseconds. Wait until the
  // fetch and its upload-pack and pack-objects are all complete.
  const std::string db = daemon.db_path();
  std::string fetch_sid;
  ASSERT_TRUE(wait_until([&] {
    const ProcessResult r = ctl(db, {"--json", "sql",
                                     "SELECT (SELECT sid FROM sessions WHERE cmd_name = 'fetch') AS sid,"
                                     " count(*) AS n, sum(status != 'complete') AS running FROM sessions"});
    simdjson::dom::parser rows_parser;
    simdjson::dom::object row;
    std::string_view sid;
    if (r.exit_code != 0 || rows_parser.parse(r.out).at(0).get(row) != simdjson::SUCCESS ||
        row["sid"].get(sid) != simdjson::SUCCESS || row["n"].get_int64().value() < 3 ||
        row["running"].get_int64().value() != 0) {
      return false;
    }
    fetch_sid = sid;
    return true;
  }));

  // tree: upload-pack under the child_start that ran it, inside remote_refs.
  const ProcessResult tree = ctl(db, {"--json", "tree", fetch_sid});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  simdjson::dom::parser parser;
  simdjson::dom::object doc = parser.parse(tree.out).get_object().value();
  simdjson::dom::object root = doc["processes"].get_array().value().at(0).get_object().value();
  EXPECT_EQ(std::string_view(root["sid"].get_string().value()), fetch_sid);
  Found child;
  find_node(root, "child", "git-upload-pack", child);
  ASSERT_TRUE(child.found) << tree.out;
  EXPECT_EQ(std::string_view(child.parent["label"].get_string().value()), "remote_refs");
  simdjson::dom::object upload_pack = child.node["entries"].get_array().value().at(0).get_object().value();
  EXPECT_EQ(std::string_view(upload_pack["cmd_name"].get_string().value()), "upload-pack");
  EXPECT_EQ(std::string_view(upload_pack["placed_by"].get_string().value()), "child_sid");
  // The process ran within its child_start..child_exit span.
  const double child_start = child.node["offset"].get_double().value();
  const double child_end = child_start + child.node["elapsed"].get_double().value();
  const double process_start = upload_pack["offset"].get_double().value();
  EXPECT_LE(child_start, process_start);
  EXPECT_LE(process_start + upload_pack["elapsed"].get_double().value(), child_end + 0.001);
  Found pack_objects;
  find_node(upload_pack, "child", "git", pack_objects);
  ASSERT_TRUE(pack_objects.found);
  EXPECT_EQ(std::string_view(pack_objects.node["entries"].get_array().value().at(0)["cmd_name"].get_string().value()),
            "pack-objects");

  const ProcessResult text = ctl(db, {"tree", fetch_sid, "--no-times"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("├─ fetch:remote_refs\n│  └─ child 0 transport/file: git-upload-pack '"), std::string::npos)
      << text.out;

  // export, stats, top and report against the same live database.
  const std::string trace = dir.file("fetch.json");
  const ProcessResult exported = ctl(db, {"export", fetch_sid, "-o", trace});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  simdjson::dom::object chrome = parser.load(trace).get_object().value();
  EXPECT_GT(chrome["traceEvents"].get_array().value().size(), 20u);

  const ProcessResult stats = ctl(db, {"--json", "stats", "--cmd", "fetch", "--since", "1h"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  simdjson::dom::array rows = parser.parse(stats.out).get_array().value();
  ASSERT_EQ(rows.size(), 1u) << stats.out;
  EXPECT_EQ(rows.at(0)["runs"].get_int64().value(), 1);

  const ProcessResult top = ctl(db, {"--json", "top", "--limit", "1"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_EQ(std::string_view(parser.parse(top.out).get_array().value().at(0)["sid"].get_string().value()), fetch_sid);

  const std::string html = dir.file("report.html");
  const ProcessResult report = ctl(db, {"report", "--html", html, "--limit", "1"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(read_file(html).find("data-name=\"upload-pack\""), std::string::npos);

  EXPECT_EQ(daemon.stop().exit_code, 0);
}

}  // namespace
}  // namespace trace2d::test
