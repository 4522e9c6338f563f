// A session belongs to the uid that opened it, in every view of a process
// tree (issue 24, findings 1 and 7): another uid (`nobody`) that names a
// victim's session as its parent is the top of a tree of its own, neither
// drawn in the victim's tree, nor exported with it, nor able to move its
// timeline; another uid that sends first the SID a victim's git names as
// its parent does not capture that git's session. trace2d at
// RLIMIT_NOFILE 1024, the victim (root) running the real git.

#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {
namespace {

// Sends `data` on one connection to `socket` as `nobody`.
void send_as_nobody(const std::string& socket, std::string data) {
  ProcessSpec spec;
  spec.argv = {LINE_SENDER_BIN, socket, "0"};
  spec.stdin_data = std::move(data);
  spec.run_as = nobody();
  const ProcessResult sent = run_process(spec, std::chrono::seconds(30));
  ASSERT_EQ(sent.exit_code, 0) << sent.err;
}

// One whole forged process: `verb`, started and ended at `time`.
std::string forged_process(const std::string& sid, const std::string& verb, const std::string& time) {
  const std::string head = R"({"sid":")" + sid + R"(","thread":"main","time":")" + time + R"(",)";
  return head + R"("event":"version","evt":"3","exe":"2.39.5"})" "\n" +
         head + R"("event":"start","t_abs":0.001,"argv":["git",")" + verb + R"("]})" "\n" +
         head + R"("event":"cmd_name","name":")" + verb + R"(","hierarchy":")" + verb + R"("})" "\n" +
         head + R"("event":"exit","t_abs":0.5,"code":0})" "\n" +
         head + R"("event":"atexit","t_abs":0.5,"code":0})" "\n";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct OtlpSpan {
  std::string name;
  std::string sid;
  std::string trace;
  std::string parent;
};

// `trace2ctl export --format otlp-json SID`, checked with the official
// definitions and ids computed independently (tests/otlp/otlp_check.js).
std::vector<OtlpSpan> otlp_export(const TempDir& dir, const std::string& db, const std::string& sid) {
  const std::string file = dir.file("otlp.json");
  const ProcessResult exported = ctl(db, {"export", "--format", "otlp-json", sid, "-o", file});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  ProcessSpec spec;
  spec.argv = {"node", TRACE2D_OTLP_CHECK_JS, TRACE2D_OTLP_DECODER_DIR, "tree", file};
  const ProcessResult checked = run_process(spec);
  EXPECT_EQ(checked.exit_code, 0) << checked.err;
  simdjson::dom::parser parser;
  const simdjson::dom::element result = parser.parse(checked.out);
  for (simdjson::dom::element problem : result["problems"].get_array()) {
    ADD_FAILURE() << "OTLP tree of " << sid << ": " << std::string_view(problem.get_string());
  }
  std::vector<OtlpSpan> spans;
  for (simdjson::dom::element span : result["spans"].get_array()) {
    OtlpSpan s;
    s.name = std::string(span["name"].get_string().value());
    std::string_view text;
    if (span["sid"].get(text) == simdjson::SUCCESS) {
      s.sid = std::string(text);
    }
    s.trace = std::string(span["trace"].get_string().value());
    if (span["parent"].get(text) == simdjson::SUCCESS) {
      s.parent = std::string(text);
    }
    spans.push_back(std::move(s));
  }
  return spans;
}

// Everything the victim sees of its tree: `tree` (text with times, JSON),
// the Chrome trace and the OTLP export (its trace ids), and the sessions
// in them.
struct Views {
  std::string text;
  std::string json;
  std::string chrome;
  std::vector<std::string> otlp;  // "trace sid name <- parent" per span
};

Views views_of(const TempDir& dir, const std::string& db, const std::string& sid) {
  Views views;
  const ProcessResult text = ctl(db, {"tree", sid, "--sids"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  views.text = text.out;
  const ProcessResult json = ctl(db, {"--json", "tree", sid});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  views.json = json.out;
  const std::string chrome = dir.file("chrome.json");
  const ProcessResult exported = ctl(db, {"export", sid, "-o", chrome});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  views.chrome = read_file(chrome);
  for (const OtlpSpan& span : otlp_export(dir, db, sid)) {
    views.otlp.push_back(span.trace + " " + span.sid + " " + span.name + " <- " + span.parent);
  }
  return views;
}

class HostileLineage : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root, to send as a second uid";
    }
    // `nobody` must reach the socket inside the test's directory.
    ASSERT_EQ(::chmod(m_dir.path().c_str(), 0755), 0);
    m_daemon = std::make_unique<RunningDaemon>(m_dir, std::vector<std::string>{}, k_service_fd_limit);
  }

  std::int64_t number(const std::string& sql) { return open_db(m_daemon->db_path()).query_int(sql).value_or(-1); }
  std::string text(const std::string& sql) {
    return open_db(m_daemon->db_path()).query_text(sql).value_or("<none>");
  }
  bool all_finished(std::int64_t sessions) {
    return number("SELECT count(*) FROM sessions WHERE status = 'running'") == 0 &&
           number("SELECT count(*) FROM sessions") >= sessions;
  }

  TempDir m_dir;
  std::unique_ptr<RunningDaemon> m_daemon;
};

// Finding 1: `<victim-sid>/20990101T000000.000000Z-Hdeadbeef-P00000001`
// from uid 65534, with a start in 2099.
TEST_F(HostileLineage, AnotherUidsChildOfAVictimsSessionIsNotInItsTreeNorMovesItsTimeline) {
  const std::string clone = clone_behind(m_dir);
  const ProcessResult fetch = run_git(clone, {"fetch", "--no-auto-gc", "origin"},
                                      {{"GIT_TRACE2_EVENT", m_daemon->git_target()}});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
  ASSERT_TRUE(wait_until([&] { return all_finished(3); }, std::chrono::seconds(20)));
  const std::string victim = text("SELECT sid FROM sessions WHERE depth = 0 AND cmd_name = 'fetch'");
  const std::int64_t victim_sessions = number("SELECT count(*) FROM sessions WHERE peer_uid = 0");
  ASSERT_GE(victim_sessions, 3);
  const Views before = views_of(m_dir, m_daemon->db_path(), victim);

  const std::string forged = victim + "/20990101T000000.000000Z-Hdeadbeef-P00000001";
  send_as_nobody(m_daemon->socket_path(), forged_process(forged, "evil", "2099-01-01T00:00:00.000000Z"));
  ASSERT_TRUE(wait_until([&] {
    return number("SELECT count(*) FROM sessions WHERE peer_uid = 65534 AND status = 'complete'") == 1;
  }));
  // Stored as the SID says, the top of its own tree, its sender's.
  EXPECT_EQ(text("SELECT parent_sid || ' ' || root_sid || ' ' || depth || ' ' || tree_sid || ' ' || peer_uid"
                 " FROM sessions WHERE sid = '" + forged + "'"),
            victim + " " + victim + " 1 " + forged + " 65534");

  // Every view of the victim's tree is what it was: no session of the
  // attacker's, and the same times (the forged start moves nothing).
  const Views after = views_of(m_dir, m_daemon->db_path(), victim);
  EXPECT_EQ(after.text, before.text);
  EXPECT_EQ(after.json, before.json);
  EXPECT_EQ(after.chrome, before.chrome);
  EXPECT_EQ(after.otlp, before.otlp);
  for (const std::string* view : {&after.text, &after.json, &after.chrome}) {
    EXPECT_EQ(view->find("deadbeef"), std::string::npos) << *view;
    EXPECT_EQ(view->find("evil"), std::string::npos) << *view;
  }
  EXPECT_EQ(after.text.find("2099"), std::string::npos);
  ASSERT_FALSE(after.otlp.empty());
  const std::string victim_trace = after.otlp.front().substr(0, after.otlp.front().find(' '));
  for (const std::string& span : after.otlp) {
    EXPECT_EQ(span.rfind(victim_trace + " ", 0), 0u) << span;
    EXPECT_EQ(span.find("deadbeef"), std::string::npos) << span;
  }
  // All of the victim's sessions are in its tree.
  simdjson::dom::parser parser;
  std::size_t processes = 0;
  for (std::size_t at = after.json.find("\"type\":\"process\""); at != std::string::npos;
       at = after.json.find("\"type\":\"process\"", at + 1)) {
    ++processes;
  }
  EXPECT_EQ(static_cast<std::int64_t>(processes), victim_sessions) << after.json;

  // The attacker's session is a tree of its own: `tree`, and its own trace
  // in OTLP (from its whole tree_sid), its process span without a parent.
  const ProcessResult own = ctl(m_daemon->db_path(), {"--json", "tree", forged});
  ASSERT_EQ(own.exit_code, 0) << own.err;
  const simdjson::dom::object doc = parser.parse(own.out).get_object().value();
  const simdjson::dom::array tops = doc["processes"].get_array().value();
  ASSERT_EQ(tops.size(), 1u) << own.out;
  EXPECT_EQ(std::string_view(tops.at(0)["sid"].get_string().value()), forged);
  EXPECT_EQ(std::string_view(tops.at(0)["placed_by"].get_string().value()), "root");
  EXPECT_EQ(own.out.find("\"sid\":\"" + victim + "\""), std::string::npos) << "none of the victim's sessions";
  const std::vector<OtlpSpan> spans = otlp_export(m_dir, m_daemon->db_path(), forged);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].sid, forged);
  EXPECT_EQ(spans[0].parent, "");
  EXPECT_NE(spans[0].trace, victim_trace);
  EXPECT_EQ(m_daemon->stop().exit_code, 0);
}

// Finding 7: uid 65534 sends one `version` event with the SID that root's
// git will name as its parent (GIT_TRACE2_PARENT_SID).
TEST_F(HostileLineage, ASquattedParentSidDoesNotCaptureTheVictimsSession) {
  const std::string parent = "deploy-2026-11-27";
  const std::string head = R"({"sid":")" + parent + R"(","thread":"main","time":"2026-11-27T00:00:00.000000Z",)";
  send_as_nobody(m_daemon->socket_path(), head + R"("event":"version","evt":"3","exe":"2.39.5"})" "\n");
  ASSERT_TRUE(wait_until([&] { return number("SELECT count(*) FROM sessions WHERE peer_uid = 65534") == 1; }));

  const std::string repo = make_repo(m_dir, "victim");
  const ProcessResult status = run_git(
      repo, {"status"}, {{"GIT_TRACE2_EVENT", m_daemon->git_target()}, {"GIT_TRACE2_PARENT_SID", parent}});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  ASSERT_TRUE(wait_until([&] {
    return number("SELECT count(*) FROM sessions WHERE peer_uid = 0 AND status = 'complete'") == 1;
  }));
  const std::string victim = text("SELECT sid FROM sessions WHERE peer_uid = 0");
  // What its SID says; its own tree.
  EXPECT_EQ(text("SELECT parent_sid || ' ' || root_sid || ' ' || depth || ' ' || tree_sid"
                 " FROM sessions WHERE sid = '" + victim + "'"),
            parent + " " + parent + " 1 " + victim);
  EXPECT_EQ(number("SELECT count(*) FROM sessions WHERE root_sid = '" + parent + "'"), 2) << "the SID's word";
  EXPECT_EQ(text("SELECT group_concat(peer_uid) FROM sessions WHERE tree_sid = '" + parent + "'"), "65534");

  // Its tree holds it alone; the squatter's holds the squatter's alone.
  const ProcessResult tree = ctl(m_daemon->db_path(), {"--json", "tree", victim});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  simdjson::dom::parser parser;
  simdjson::dom::array tops = parser.parse(tree.out)["processes"].get_array().value();
  ASSERT_EQ(tops.size(), 1u) << tree.out;
  EXPECT_EQ(std::string_view(tops.at(0)["sid"].get_string().value()), victim);
  EXPECT_EQ(std::string_view(tops.at(0)["cmd_name"].get_string().value()), "status");
  EXPECT_EQ(tree.out.find("\"sid\":\"" + parent + "\""), std::string::npos) << tree.out;
  const ProcessResult text_tree = ctl(m_daemon->db_path(), {"tree", victim, "--sids"});
  ASSERT_EQ(text_tree.exit_code, 0) << text_tree.err;
  EXPECT_NE(text_tree.out.find(victim), std::string::npos) << text_tree.out;
  const ProcessResult squatter = ctl(m_daemon->db_path(), {"--json", "tree", parent});
  ASSERT_EQ(squatter.exit_code, 0) << squatter.err;
  EXPECT_EQ(squatter.out.find(victim), std::string::npos) << squatter.out;
  // The victim's OTLP trace is its own, from its whole tree_sid (the
  // checker derives it independently): not the squatter's SID's, and its
  // process span has no parent.
  const std::vector<OtlpSpan> spans = otlp_export(m_dir, m_daemon->db_path(), victim);
  std::vector<const OtlpSpan*> processes;
  for (const OtlpSpan& span : spans) {
    if (!span.sid.empty()) {
      processes.push_back(&span);
    }
    EXPECT_EQ(span.trace, spans.front().trace) << span.name;
  }
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0]->sid, victim);
  EXPECT_EQ(processes[0]->parent, "");
  const std::vector<OtlpSpan> squatter_spans = otlp_export(m_dir, m_daemon->db_path(), parent);
  ASSERT_EQ(squatter_spans.size(), 1u);
  EXPECT_NE(squatter_spans[0].trace, spans.front().trace);
  EXPECT_EQ(m_daemon->stop().exit_code, 0);
}

}  // namespace
}  // namespace trace2d::test
