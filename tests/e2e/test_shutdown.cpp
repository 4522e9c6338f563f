// SIGTERM while clients are mid-stream: trace2d exits 0 and every event a
// client had written before the signal is stored, none twice.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

TEST(Shutdown, SigtermMidStreamStoresEverythingWrittenBeforeIt) {
  constexpr int k_clients = 50;
  constexpr int k_events_per_client = 2000;
  TempDir dir;
  RunningDaemon daemon(dir, {"--shutdown-grace-ms", "100"});
  std::vector<std::atomic<int>> written(k_clients);
  std::atomic<int> started{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < k_clients; ++c) {
    clients.emplace_back([&, c] {
      SocketClient client(daemon.socket_path());
      const std::string sid = "shutdown-client-" + std::to_string(c);
      started.fetch_add(1);
      for (int n = 0; n < k_events_per_client; ++n) {
        if (!client.send(event_line(sid, n == 0 ? "version" : "data", n))) {
          return;  // trace2d closed us after its grace period
        }
        written[c].store(n + 1);
        if (n % 10 == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));  // ~0.5 s in all
        }
      }
    });
  }
  ASSERT_TRUE(wait_until([&] { return started.load() == k_clients; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<int> before_signal(k_clients);
  for (int c = 0; c < k_clients; ++c) {
    before_signal[c] = written[c].load();
  }
  daemon.process().signal(SIGTERM);
  const ProcessResult result = daemon.process().wait(std::chrono::seconds(60));
  for (auto& t : clients) {
    t.join();
  }
  ASSERT_EQ(result.exit_code, 0) << result.err;

  db::Database db = open_db(daemon.db_path());
  long mid_stream = 0;
  for (int c = 0; c < k_clients; ++c) {
    const std::string sid = "shutdown-client-" + std::to_string(c);
    const auto stored = db.query_int("SELECT count(*) FROM events WHERE sid = '" + sid + "'").value_or(0);
    EXPECT_GE(stored, before_signal[c]) << sid;
    EXPECT_LE(stored, written[c].load()) << sid;
    EXPECT_EQ(db.query_int("SELECT count(DISTINCT seq) FROM events WHERE sid = '" + sid + "'"), stored);
    mid_stream += before_signal[c] > 0 && before_signal[c] < k_events_per_client ? 1 : 0;
  }
  EXPECT_GT(mid_stream, 0) << "no client was mid-stream at the signal: the test proves nothing";
  long cut_off = 0;
  for (int c = 0; c < k_clients; ++c) {
    cut_off += written[c].load() < k_events_per_client ? 1 : 0;
  }
  EXPECT_GT(cut_off, 0) << "every client finished within the grace period: the close path went untested";
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects WHERE reason NOT LIKE 'not JSON%'"), 0);
}

}  // namespace
}  // namespace trace2d::test
