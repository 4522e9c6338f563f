// Trace2 producers other than git, in the shapes their sources write
// (tests/data/producers/, described in tests/data/README.md): sent to a real
// trace2d over its stream socket, each process on its own connection as
// each producer does, then read back from the database and with trace2ctl.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "proto/timestamp.hpp"
#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

const std::filesystem::path k_producers = std::filesystem::path(TRACE2D_TEST_DATA) / "producers";

// The fixtures' times all start with this date and hour (UTC).
constexpr std::string_view k_fixture_hour = "2026-11-21T10:";

// The current UTC date and hour in the fixtures' layout: the fixtures' times
// moved to it lie within the last hour (give or take their few seconds), so
// that `--since 1h` must find them. Only the date and hour change: each
// producer's own time shape stays as it wrote it.
std::string current_hour() {
  return proto::format_utc_timestamp(proto::unix_now_us()).substr(0, k_fixture_hour.size());
}

std::string moved_to(const std::string& text, const std::string& hour) {
  std::string out = text;
  for (auto at = out.find(k_fixture_hour); at != std::string::npos; at = out.find(k_fixture_hour, at)) {
    out.replace(at, k_fixture_hour.size(), hour);
    at += hour.size();
  }
  return out;
}

std::string sid_of(const std::string& line) {
  simdjson::dom::parser parser;
  return std::string(parser.parse(line)["sid"].get_string().value());
}

// Each SID's lines on a connection of its own, in the file's order of SIDs.
void send_per_process(const RunningDaemon& daemon, const std::vector<std::string>& lines) {
  std::vector<std::string> order;
  std::map<std::string, std::string> by_sid;
  for (const std::string& line : lines) {
    const std::string sid = sid_of(line);
    if (by_sid.find(sid) == by_sid.end()) {
      order.push_back(sid);
    }
    by_sid[sid] += line + "\n";
  }
  for (const std::string& sid : order) {
    SocketClient client(daemon.socket_path());
    ASSERT_TRUE(client.send(by_sid[sid])) << sid;
  }
}

std::vector<std::string> fixture(const std::string& name, const std::string& hour) {
  const std::string text = moved_to(read_file(k_producers / name), hour);
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (auto newline = text.find('\n'); newline != std::string::npos; newline = text.find('\n', start)) {
    lines.push_back(text.substr(start, newline - start));
    start = newline + 1;
  }
  return lines;
}

class ProducersTest : public ::testing::Test {
 protected:
  // Sends the fixtures and waits until `sessions` sessions are complete.
  void send(const std::vector<std::string>& names, long sessions) {
    for (const std::string& name : names) {
      send_per_process(m_daemon, fixture(name, m_hour));
    }
    ASSERT_TRUE(wait_until([&] {
      db::Database db = open_db(m_daemon.db_path());
      return db.query_int("SELECT count(*) FROM sessions WHERE status = 'complete'").value_or(0) == sessions;
    }));
  }
  std::optional<std::string> text(const std::string& sql) { return open_db(m_daemon.db_path()).query_text(sql); }
  std::optional<std::int64_t> number(const std::string& sql) {
    return open_db(m_daemon.db_path()).query_int(sql);
  }

  TempDir m_dir;
  RunningDaemon m_daemon{m_dir};
  std::string m_hour = current_hour();
};

constexpr const char* k_repo_sid = "repo-20261121T100000Z-P00003039";
constexpr const char* k_gcm_sid =
    "20261121T100004.000180Z-H0a7c9cdf-P00004000/9d3b1a5e-6f2c-4c1d-8e7a-3b5f0c2d4e6a";

TEST_F(ProducersTest, RepoSessionIsTimedNamedAndClean) {
  send({"repo_sync.jsonl"}, 2);
  EXPECT_EQ(number("SELECT count(*) FROM problems"), 0) << *text("SELECT group_concat(message, '; ') FROM problems");
  EXPECT_EQ(number("SELECT count(*) FROM rejects"), 0);
  const std::string where = std::string(" FROM sessions WHERE sid = '") + k_repo_sid + "'";
  EXPECT_EQ(text("SELECT start_time" + where), m_hour + "00:00.412345Z");
  EXPECT_EQ(text("SELECT end_time" + where), m_hour + "00:03.125101Z");
  EXPECT_EQ(text("SELECT elapsed || ' ' || exit_code || ' ' || cmd_name || ' ' || hierarchy || ' ' || evt ||"
                 " ' ' || exe || ' ' || sid_pid || ' ' || event_count" + where),
            "2.712756 0 sync repo/sync 2 2.50.1 12345 8");
  // Every line is kept as sent, its time included; `time` is in git's format.
  EXPECT_EQ(text("SELECT json_extract(json, '$.time') || ' ' || time FROM events WHERE sid = '" +
                 std::string(k_repo_sid) + "' AND seq = 4"),
            m_hour + "00:03+00:00Z " + m_hour + "00:03.000000Z");
  const std::vector<std::string> sent = fixture("repo_sync.jsonl", m_hour);
  EXPECT_EQ(text("SELECT json FROM events WHERE sid = '" + std::string(k_repo_sid) + "' AND seq = 5"), sent[10]);
  EXPECT_EQ(text("SELECT event FROM events WHERE sid = '" + std::string(k_repo_sid) + "' AND seq = 5"), "data_json");
  // The git it ran is its child.
  EXPECT_EQ(text("SELECT cmd_name FROM sessions WHERE parent_sid = '" + std::string(k_repo_sid) + "'"), "fetch");

  // Visible to the time-windowed commands.
  const ProcessResult sessions = ctl(m_daemon.db_path(), {"--json", "sessions", "--since", "-1h"});
  ASSERT_EQ(sessions.exit_code, 0) << sessions.err;
  simdjson::dom::parser parser;
  std::map<std::string, std::string> listed;  // sid -> cmd_name
  const simdjson::dom::array session_rows = parser.parse(sessions.out).get_array().value();
  for (simdjson::dom::element row : session_rows) {
    std::string_view cmd;
    if (row["cmd_name"].get(cmd) != simdjson::SUCCESS) {
      cmd = "";
    }
    listed[std::string(row["sid"].get_string().value())] = cmd;
  }
  EXPECT_EQ(listed[k_repo_sid], "sync") << sessions.out;
  EXPECT_EQ(listed.size(), 2u) << sessions.out;

  const ProcessResult stats = ctl(m_daemon.db_path(), {"--json", "stats", "--since", "-1h"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  bool sync_row = false;
  const simdjson::dom::array stats_rows = parser.parse(stats.out).get_array().value();
  for (simdjson::dom::element row : stats_rows) {
    std::string_view cmd;
    if (row["command"].get(cmd) == simdjson::SUCCESS && cmd == "sync") {  // stats names the command shown
      sync_row = true;
      EXPECT_EQ(row["runs"].get_int64().value(), 1) << stats.out;
    }
  }
  EXPECT_TRUE(sync_row) << stats.out;

  const std::string html = m_dir.file("report.html");
  const ProcessResult report = ctl(m_daemon.db_path(), {"report", "--html", html, "--since", "-1h"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string page = read_file(html);
  EXPECT_NE(page.find(k_repo_sid), std::string::npos);
  EXPECT_NE(page.find("sync"), std::string::npos);
}

TEST_F(ProducersTest, GitCredentialManagerSessionIsTimedAndClean) {
  send({"gcm_get.jsonl"}, 1);
  EXPECT_EQ(number("SELECT count(*) FROM problems"), 0) << *text("SELECT group_concat(message, '; ') FROM problems");
  const std::string where = std::string(" FROM sessions WHERE sid = '") + k_gcm_sid + "'";
  EXPECT_EQ(text("SELECT start_time || ' ' || end_time || ' ' || elapsed || ' ' || exit_code || ' ' || error_count" +
                 where),
            m_hour + "00:04.203451Z " + m_hour + "00:06.000000Z 1.9481813 0 1");
  // Its region_leave has no t_rel: timed from the enter's t_abs. A null msg
  // is no message.
  EXPECT_EQ(text("SELECT group_concat(label || '=' || round(elapsed, 7) || '/' || coalesce(msg, '-'), ' ')"
                 " FROM (SELECT * FROM regions ORDER BY enter_seq)"),
            "get device code=1.1999999/get device code save credential=0.25/-");
  EXPECT_EQ(text("SELECT child_class || ' ' || elapsed || ' ' || pid || ' ' || start_time FROM children"),
            "git 0.0411034 16404 " + m_hour + "00:04.250000Z");
  EXPECT_EQ(number("SELECT count(*) FROM region_stats WHERE category = 'oauth2' AND max_elapsed > 1.19"), 1);

  const ProcessResult sessions = ctl(m_daemon.db_path(), {"sessions", "--since", "-1h", "--full-sid"});
  ASSERT_EQ(sessions.exit_code, 0) << sessions.err;
  EXPECT_NE(sessions.out.find("9d3b1a5e-6f2c-4c1d-8e7a-3b5f0c2d4e6a"), std::string::npos) << sessions.out;
}

}  // namespace
}  // namespace trace2d::test
