// Hundreds of git-like connections open at once, on trace2d's single io thread.

#include <gtest/gtest.h>

#include <barrier>
#include <thread>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

TEST(Concurrency, HundredsOfSimultaneousConnectionsAreAllStored) {
  constexpr int k_clients = 300;
  constexpr int k_events = 30;
  TempDir dir;
  RunningDaemon daemon(dir);
  // Everyone connects first, then everyone writes: all connections are open
  // at the same time.
  std::barrier connected(k_clients);
  std::vector<std::thread> clients;
  for (int c = 0; c < k_clients; ++c) {
    clients.emplace_back([&, c] {
      SocketClient client(daemon.socket_path());
      connected.arrive_and_wait();
      const std::string sid = "concurrent-" + std::to_string(c);
      for (int n = 0; n < k_events; ++n) {
        const char* kind = n == 0 ? "version" : n == k_events - 1 ? "atexit" : "data";
        ASSERT_TRUE(client.send(event_line(sid, kind, n)));
      }
    });
  }
  for (auto& t : clients) {
    t.join();
  }
  const ProcessResult result = daemon.stop();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE status = 'complete'"), k_clients);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events"), k_clients * k_events);
  EXPECT_EQ(db.query_int("SELECT count(DISTINCT peer_pid) FROM sessions"), 1);  // all from this test
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
}

}  // namespace
}  // namespace trace2d::test
