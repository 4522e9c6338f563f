// Bad input over a real socket: each bad line becomes a `rejects` row with a
// reason, every good line around it is stored, and trace2d keeps running.

#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

using namespace std::string_literals;

TEST(MalformedInput, BadLinesAreRejectedAndGoodLinesAroundThemKept) {
  TempDir dir;
  RunningDaemon daemon(dir);
  const std::string sid = "20261121T100000.000000Z-H00000000-P00000001";
  std::vector<std::pair<std::string, std::string>> bad = {
      {"this is not json\n", "not JSON"},
      {R"({"event":"start","sid":")" + sid + "\",\"argv\":[\"git\"\n", "not JSON"},
      {R"({"event":"version","thread":"main"})" "\n", "missing field 'sid'"},
      {R"({"sid":")" + sid + R"(","thread":"main"})" "\n", "missing field 'event'"},
      {"{\"event\":\"version\",\"sid\":\"a\0b\"}\n"s, "not JSON"},
      {R"({"event":"version","sid":42})" "\n", "sid is not a string"},
      {"{\"event\":\"data_json\",\"sid\":\"" + sid + "\",\"value\":\"" +
           std::string(5 * 1000 * 1000, 'x') + "\"}\n",
       "line too long"},
      {R"({"event":"version","sid":")" + sid + R"("} trailing)" "\n", "trailing"},
  };
  {
    SocketClient client(daemon.socket_path());
    int n = 0;
    ASSERT_TRUE(client.send(event_line(sid, "version", n++)));
    for (const auto& [line, reason] : bad) {
      ASSERT_TRUE(client.send(line));
      ASSERT_TRUE(client.send(event_line(sid, "data", n++)));
    }
    // A single event of 4 MiB is an event, not a reject.
    std::string big = event_line(sid, "data", n++);
    big.insert(big.size() - 2, ",\"blob\":\"" + std::string(4 * 1024 * 1024, 'y') + "\"");
    ASSERT_TRUE(client.send(big));
    // The last line has no '\n': EOF ends it.
    std::string last = event_line(sid, "atexit", n++);
    last.pop_back();
    ASSERT_TRUE(client.send(last));
  }
  // Still running and accepting.
  {
    SocketClient again(daemon.socket_path());
    ASSERT_TRUE(again.send(event_line("second-session", "version")));
  }
  const ProcessResult result = daemon.stop();
  ASSERT_EQ(result.exit_code, 0) << result.err;

  db::Database db = open_db(daemon.db_path());
  db::Statement rejects = db.prepare("SELECT reason, size, length(raw) FROM rejects ORDER BY id");
  for (const auto& [line, reason] : bad) {
    ASSERT_TRUE(rejects.step()) << "missing reject for: " << line.substr(0, 60);
    EXPECT_NE(std::string(rejects.column_text(0)).find(reason), std::string::npos)
        << rejects.column_text(0) << " for " << line.substr(0, 60);
    EXPECT_EQ(rejects.column_int(1), static_cast<long>(line.size() - 1));  // without '\n'
    EXPECT_LE(rejects.column_int(2), 64 * 1024);
  }
  EXPECT_FALSE(rejects.step());

  // version + one data per bad line + the 4 MiB event + atexit, in order.
  db::Statement events = db.prepare("SELECT seq, event FROM events WHERE sid = ? ORDER BY seq");
  events.bind_text(1, sid);
  std::vector<std::string> kinds;
  while (events.step()) {
    EXPECT_EQ(events.column_int(0), static_cast<long>(kinds.size()));
    kinds.emplace_back(events.column_text(1));
  }
  ASSERT_EQ(kinds.size(), bad.size() + 3);
  EXPECT_EQ(kinds.front(), "version");
  EXPECT_EQ(kinds.back(), "atexit");
  EXPECT_EQ(db.query_text("SELECT status FROM sessions WHERE sid = '" + sid + "'"), "complete");
  EXPECT_EQ(db.query_int("SELECT length(json_extract(json, '$.blob')) FROM events WHERE json LIKE '%\"blob\"%'"),
            4 * 1024 * 1024);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE sid = 'second-session'"), 1);
}

TEST(MalformedInput, ByteByByteWritesStillFrameLines) {
  TempDir dir;
  RunningDaemon daemon(dir);
  std::string stream;
  for (int i = 0; i < 20; ++i) {
    stream += event_line("slow-session", i == 0 ? "version" : "data", i);
  }
  {
    SocketClient client(daemon.socket_path());
    for (char c : stream) {
      ASSERT_TRUE(client.send(std::string_view(&c, 1)));
    }
  }
  const ProcessResult result = daemon.stop();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid = 'slow-session'"), 20);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
}

}  // namespace
}  // namespace trace2d::test
