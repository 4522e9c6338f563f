// A collector that stops reading (SIGSTOP) or is not there at all never
// slows the example down: its events beyond the queue are dropped and
// counted, the count arrives once trace2d resumes, and nothing else changes.

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <iostream>

#include "tests/client/client_e2e_support.hpp"

namespace trace2d::test {
namespace {

// Enough tiny regions to overflow the 1 MiB queue and the socket buffer.
const std::vector<std::string> k_chatty = {"--chatter", "3000"};

class ClientStalledCollector : public ExampleFixture {
 protected:
  // Median run time of `runs` runs, each cloning afresh.
  double median_seconds(const std::string& name, const std::string& target, int runs) {
    std::vector<double> seconds;
    for (int i = 0; i < runs; ++i) {
      const ExampleRun run = run_example(name + "-" + std::to_string(i), target, k_chatty);
      EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
      EXPECT_TRUE(run.result.err.empty()) << run.result.err;
      seconds.push_back(run.result.seconds);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
  }
};

TEST_F(ClientStalledCollector, StoppedTrace2dDoesNotSlowTheProgramAndDropsAreReported) {
  const long expected_events = events_written_to_a_file("twin", k_chatty);
  const double untraced = median_seconds("untraced", "", 3);

  RunningDaemon daemon(m_dir);
  const double running = median_seconds("running", daemon.git_target(), 3);
  ASSERT_EQ(::kill(daemon.pid(), SIGSTOP), 0);
  std::vector<ExampleRun> runs;
  std::vector<double> seconds;
  for (int i = 0; i < 3; ++i) {
    runs.push_back(run_example("stopped-" + std::to_string(i), daemon.git_target(), k_chatty));
    EXPECT_EQ(runs.back().result.exit_code, 0) << runs.back().result.err;
    EXPECT_TRUE(runs.back().result.err.empty()) << runs.back().result.err;
    seconds.push_back(runs.back().result.seconds);
  }
  std::sort(seconds.begin(), seconds.end());
  const double stopped = seconds[1];
  ASSERT_EQ(::kill(daemon.pid(), SIGCONT), 0);
  std::cout << "[ timing   ] untraced " << untraced << " s, trace2d running " << running
            << " s, trace2d stopped " << stopped << " s\n";
  // Unchanged within noise: the library never waits for the collector, and
  // at exit gives it up at once when it has taken nothing for 20 ms. The
  // events cost the same whether trace2d reads them or not; formatting
  // them at all is the only difference with no tracing.
  EXPECT_LT(stopped, running * 1.25 + 0.1)
      << "running " << running << " s, stopped " << stopped << " s";
  EXPECT_LT(stopped, untraced * 1.5 + 0.15)
      << "untraced " << untraced << " s, stopped " << stopped << " s";

  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  for (const ExampleRun& run : runs) {
    SCOPED_TRACE(run.sid);
    EXPECT_EQ(count(db,
                    "SELECT count(*) FROM sessions WHERE sid = ?1 AND status = 'complete'"
                    " AND exit_code = 0",
                    run.sid),
              1)
        << "exit and atexit made it";
    const long stored = count(db, "SELECT event_count FROM sessions WHERE sid = ?1", run.sid);
    const long dropped =
        count(db,
              "SELECT CAST(value AS INTEGER) FROM events WHERE sid = ?1 AND event = 'data'"
              " AND category = 'trace2d' AND label = 'dropped_events'",
              run.sid);
    EXPECT_GT(dropped, 0);
    EXPECT_EQ(stored - 1 + dropped, expected_events)
        << "stored " << stored << ", dropped " << dropped;
    EXPECT_EQ(count(db, "SELECT count(*) FROM sessions WHERE parent_sid = ?1", run.sid), 6)
        << "git's own events waited in its sockets";
  }
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
}

TEST_F(ClientStalledCollector, NoCollectorAtAllChangesNothing) {
  const double untraced = median_seconds("untraced", "", 3);
  const double absent = median_seconds("absent", "af_unix:stream:" + m_dir.file("absent.sock"), 3);
  std::cout << "[ timing   ] untraced " << untraced << " s, no collector " << absent << " s\n";
  EXPECT_LT(absent, untraced * 1.25 + 0.1)
      << "untraced " << untraced << " s, absent " << absent << " s";
  // A socket file nobody listens on any more: connection refused.
  {
    RunningDaemon gone(m_dir);
    gone.process().signal(SIGKILL);
    (void)gone.process().wait();
  }
  const ExampleRun refused = run_example("refused", "af_unix:" + m_dir.file("t.sock"));
  EXPECT_EQ(refused.result.exit_code, 0);
  EXPECT_TRUE(refused.result.err.empty()) << refused.result.err;
  EXPECT_EQ(refused.sid, "");
}

}  // namespace
}  // namespace trace2d::test
