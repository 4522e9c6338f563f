// `trace2ctl status` against a live daemon and after it stopped.

#include <gtest/gtest.h>
#include <simdjson.h>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

TEST(Status, ReportsEachSourceWhileRunningAndAfter) {
  TempDir dir;
  RunningDaemon daemon(dir);
  {
    SocketClient stream(daemon.socket_path());
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(stream.send(event_line("status-stream", i == 0 ? "version" : "data", i)));
    }
    ASSERT_TRUE(stream.send("not json\n"));
    DgramClient dgram(daemon.dgram_socket_path());
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(dgram.send(event_line("status-dgram", i == 0 ? "version" : "data", i)));
    }
  }
  // The daemon publishes every 2 s; wait for a report that has everything.
  ASSERT_TRUE(wait_until([&] {
    const ProcessResult r = ctl(daemon.db_path(), {"status", "--json"});
    // Sources count what was parsed; totals what is committed: both complete.
    return r.exit_code == 0 && r.out.find("\"events\":10,\"rejects\":1") != std::string::npos &&
           r.out.find("\"events\":5,\"rejects\":0") != std::string::npos &&
           r.out.find("\"totals\":{\"sessions\":2,\"events\":15") != std::string::npos;
  }, std::chrono::seconds(10)));
  const ProcessResult live = ctl(daemon.db_path(), {"status"});
  EXPECT_EQ(live.exit_code, 0) << live.err;
  EXPECT_NE(live.out.find(": running (pid " + std::to_string(daemon.pid()) + ")"), std::string::npos) << live.out;
  EXPECT_NE(live.out.find(daemon.socket_path()), std::string::npos) << live.out;
  EXPECT_NE(live.out.find(daemon.dgram_socket_path()), std::string::npos) << live.out;

  const ProcessResult json = ctl(daemon.db_path(), {"status", "--json"});
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  EXPECT_TRUE(doc["running"].get_bool().value());
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> by_source;  // events, rejects
  for (simdjson::dom::element source : doc["sources"].get_array()) {
    by_source[std::string(source["source"].get_string().value())] = {source["events"].get_int64().value(),
                                                                     source["rejects"].get_int64().value()};
  }
  EXPECT_EQ(by_source["stream"], std::make_pair(std::int64_t{10}, std::int64_t{1}));
  EXPECT_EQ(by_source["dgram"], std::make_pair(std::int64_t{5}, std::int64_t{0}));
  EXPECT_EQ(doc["totals"]["events"].get_int64().value(), 15);

  ASSERT_EQ(daemon.stop().exit_code, 0);
  const ProcessResult after = ctl(daemon.db_path(), {"status"});
  // Issue 26: as `systemctl status`, 3 when the daemon is not running (it
  // was 0); the report is printed all the same.
  EXPECT_EQ(after.exit_code, 3) << after.err;
  EXPECT_EQ(ctl(daemon.db_path(), {"--json", "status"}).exit_code, 3);
  EXPECT_NE(after.out.find("not running"), std::string::npos) << after.out;
}

// Its process lives but its status is stale (it cannot write the database:
// the disk is full, a lock is held; or it is stopped): 5, not 3, which a
// monitor reads as "not running" and restarts it, losing what it holds.
TEST(Status, ADaemonThatLivesButDoesNotUpdateItsStatusIsNotCalledStopped) {
  TempDir dir;
  RunningDaemon daemon(dir);
  ASSERT_EQ(daemon.stop().exit_code, 0);
  {
    db::Database db(daemon.db_path(), db::OpenMode::read_write_create);
    // This test's own process stands for the daemon's: alive, silent.
    db.exec("UPDATE daemon_status SET pid = " + std::to_string(::getpid()) +
            ", updated_at = '2026-01-01T00:00:00.000000Z'");
  }
  const ProcessResult stale = ctl(daemon.db_path(), {"status"});
  EXPECT_EQ(stale.exit_code, 5) << stale.err;
  EXPECT_NE(stale.out.find("not updating its status: its process lives"), std::string::npos) << stale.out;
  EXPECT_EQ(ctl(daemon.db_path(), {"--json", "status"}).exit_code, 5);
}

TEST(Status, ClearErrorWithoutAnyReport) {
  TempDir dir;
  const ProcessResult missing = ctl(dir.file("none.db"), {"status"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("not found"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace trace2d::test
