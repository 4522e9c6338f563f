// The datagram socket under load, and while the database is locked.

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

TEST(Dgram, TwentyWritersAtFullSpeedLoseNothing) {
  constexpr int k_writers = 20;
  constexpr int k_events = 5000;  // per writer: 100,000 datagrams in all
  TempDir dir;
  // One uid alone fills the whole memory bound here (under the sanitizers
  // above all): its datagrams wait for the pipeline, none is dropped.
  RunningDaemon daemon(dir);
  std::vector<std::thread> writers;
  std::atomic<int> failed{0};
  for (int w = 0; w < k_writers; ++w) {
    writers.emplace_back([&, w] {
      DgramClient client(daemon.dgram_socket_path());
      const std::string sid = "dgram-writer-" + std::to_string(w);
      for (int n = 0; n < k_events; ++n) {
        const char* kind = n == 0 ? "version" : n == k_events - 1 ? "atexit" : "data";
        if (!client.send(event_line(sid, kind, n))) {
          failed.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : writers) {
    t.join();
  }
  EXPECT_EQ(failed.load(), 0);
  ASSERT_TRUE(wait_until([&] {
    db::Database db = open_db(daemon.db_path());
    return db.query_int("SELECT coalesce(sum(event_count), 0) FROM sessions").value_or(0) == k_writers * k_events;
  }, std::chrono::seconds(60))) << [&] {
    db::Database db = open_db(daemon.db_path());
    return "stored " + std::to_string(db.query_int("SELECT coalesce(sum(event_count), 0) FROM sessions").value_or(-1)) +
           ", dropped " + std::to_string(db.query_int("SELECT coalesce(sum(dropped), 0) FROM uid_stats").value_or(-1)) +
           ", kernel drops " +
           std::to_string(db.query_int("SELECT kernel_drops FROM source_stats WHERE source = 'dgram'").value_or(-1)) +
           "; " + db.query_text("SELECT group_concat(message, '; ') FROM problems WHERE seq = -1").value_or("");
  }();
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events"), k_writers * k_events);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE status = 'complete'"), k_writers);
  EXPECT_EQ(db.query_int("SELECT kernel_drops FROM source_stats WHERE source = 'dgram'"), 0);
  EXPECT_EQ(db.query_int("SELECT events FROM source_stats WHERE source = 'dgram'"), k_writers * k_events);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
  // Every datagram's sender came from the kernel.
  EXPECT_EQ(db.query_int("SELECT count(DISTINCT peer_pid) FROM sessions"), 1);
  EXPECT_EQ(db.query_int("SELECT peer_pid FROM sessions LIMIT 1"), static_cast<long>(::getpid()));
}

TEST(Dgram, SeveralLinesInOneDatagram) {
  TempDir dir;
  RunningDaemon daemon(dir);
  {
    DgramClient client(daemon.dgram_socket_path());
    std::string three = event_line("multi", "version", 0) + event_line("multi", "data", 1) +
                        event_line("multi", "atexit", 2);
    three.pop_back();  // the last line without its '\n'
    ASSERT_TRUE(client.send(three));
  }
  ASSERT_TRUE(wait_until([&] {
    db::Database db = open_db(daemon.db_path());
    return db.query_int("SELECT event_count FROM sessions WHERE sid = 'multi'").value_or(0) == 3;
  }));
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_text("SELECT status FROM sessions"), "complete");
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
}

TEST(Dgram, GitDoesNotWaitForALockedDatabase) {
  constexpr int k_runs = 20;
  TempDir dir;
  RunningDaemon daemon(dir);
  const std::string repo = make_repo(dir, "repo");
  const std::map<std::string, std::string> env = {
      {"GIT_TRACE2_EVENT", "af_unix:dgram:" + daemon.dgram_socket_path()}};
  auto median_run = [&] {
    std::vector<double> seconds;
    for (int i = 0; i < k_runs; ++i) {
      const ProcessResult r = run_git(repo, {"status"}, env);
      EXPECT_EQ(r.exit_code, 0);
      seconds.push_back(r.seconds);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
  };
  const double unlocked = median_run();
  db::Database locker(daemon.db_path(), db::OpenMode::read_write_create);
  locker.set_busy_timeout(5000);
  locker.exec("BEGIN EXCLUSIVE");
  const auto locked_at = std::chrono::steady_clock::now();
  const double locked = median_run();
  std::this_thread::sleep_until(locked_at + std::chrono::seconds(3));
  locker.exec("COMMIT");
  EXPECT_LT(locked, unlocked * 1.5 + 0.010) << "unlocked median " << unlocked << " s, locked " << locked << " s";
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE source = 'dgram' AND status = 'complete'"), 2 * k_runs);
}

}  // namespace
}  // namespace trace2d::test

namespace trace2d::test {
namespace {

TEST(Dgram, SilentSessionsBecomeIncompleteAfterTheIdleTimeout) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--dgram-idle-timeout-ms", "300"});
  {
    DgramClient client(daemon.dgram_socket_path());
    ASSERT_TRUE(client.send(event_line("goes-quiet", "version", 0)));
    ASSERT_TRUE(client.send(event_line("finishes", "version", 0)));
    ASSERT_TRUE(client.send(event_line("finishes", "atexit", 1)));
  }
  ASSERT_TRUE(wait_until([&] {
    db::Database db = open_db(daemon.db_path());
    return db.query_text("SELECT status FROM sessions WHERE sid = 'goes-quiet'") ==
           std::optional<std::string>("incomplete");
  }));
  {
    // It speaks again: running once more, then complete.
    DgramClient client(daemon.dgram_socket_path());
    ASSERT_TRUE(client.send(event_line("goes-quiet", "atexit", 1)));
  }
  ASSERT_TRUE(wait_until([&] {
    db::Database db = open_db(daemon.db_path());
    return db.query_text("SELECT status FROM sessions WHERE sid = 'goes-quiet'") ==
           std::optional<std::string>("complete");
  }));
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_text("SELECT status FROM sessions WHERE sid = 'finishes'"), "complete");
  EXPECT_EQ(db.query_int("SELECT event_count FROM sessions WHERE sid = 'goes-quiet'"), 2);
}

}  // namespace
}  // namespace trace2d::test
