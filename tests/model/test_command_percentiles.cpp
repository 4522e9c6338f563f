// Each command's p99 for detail by outcome: command_stats' nearest rank,
// over the recent runs only, and none for a command with too few runs.

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "model/command_percentiles.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

TEST(CommandPercentiles, NearestRankOverTheRecentRunsOfCommandsWithEnoughOfThem) {
  SampleDatabase sample;
  db::Database& db = sample.writer();
  db::Statement timed = db.prepare("UPDATE sessions SET elapsed = ?2, status = 'complete' WHERE id = ?1");
  const auto add = [&](std::int64_t id, const std::string& cmd, std::int64_t ago_us, double elapsed) {
    const std::string sid = "pct-" + std::to_string(id);
    sample.insert_session(id, sid, cmd, "running", sample.time_ago(ago_us), sample.time_ago(ago_us));
    timed.bind_int(1, id);
    timed.bind_double(2, elapsed);
    timed.run();
  };
  // 100 clones of 1 to 100 s in the last day: the 99th smallest.
  for (std::int64_t i = 1; i <= 100; ++i) {
    add(1000 + i, "clone", k_hour_us + i, static_cast<double>(i));
  }
  // Older than the window: not counted, however slow.
  for (std::int64_t i = 0; i < 50; ++i) {
    add(2000 + i, "clone", 8 * k_day_us, 1000.0);
  }
  // 19 runs: too few for a p99 (the window's minimum is 20).
  for (std::int64_t i = 0; i < 19; ++i) {
    add(3000 + i, "gc", k_hour_us, 5.0);
  }
  // The sample's sessions have no uid, as `trace2d import`'s.
  const std::optional<std::int64_t> no_uid;
  const auto p99 = model::command_p99(db);
  ASSERT_TRUE(p99.p99(no_uid, "clone"));
  EXPECT_DOUBLE_EQ(*p99.p99(no_uid, "clone"), 99.0);
  EXPECT_FALSE(p99.p99(no_uid, "gc"));
  // The sample's own sessions (one status that exited) are too few too.
  EXPECT_FALSE(p99.p99(no_uid, "status"));

  // 20 runs: the 20th smallest ((20 * 99 + 99) / 100 = 20), as command_stats.
  add(3019, "gc", k_hour_us, 7.0);
  EXPECT_EQ(model::command_p99(db).p99(no_uid, "gc"), 7.0);
  // A longer window takes the old runs in; a bound on the runs keeps the
  // newest of them only.
  model::PercentileWindow month;
  month.days = 30;
  EXPECT_EQ(model::command_p99(db, month).p99(no_uid, "clone"), 1000.0);
  month.max_runs = db.query_int(
                         "SELECT count(*) FROM sessions WHERE elapsed IS NOT NULL AND start_time >= "
                         "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-7 days')")
                       .value_or(0);
  ASSERT_GE(month.max_runs, 120);  // the recent clones and gc, and what of the sample's ran
  EXPECT_EQ(model::command_p99(db, month).p99(no_uid, "clone"), 99.0);
}

// A sender's runs measure its own sessions only: another uid's flood of
// fast runs of the same command neither makes its ordinary runs slow nor
// pushes them out of the window, which is each sender's own.
TEST(CommandPercentiles, EachSenderIsMeasuredAgainstItsOwnRuns) {
  SampleDatabase sample;
  db::Database& db = sample.writer();
  db::Statement owned =
      db.prepare("UPDATE sessions SET elapsed = ?2, status = 'complete', peer_uid = ?3 WHERE id = ?1");
  const auto add = [&](std::int64_t id, std::int64_t uid, std::int64_t ago_us, double elapsed) {
    const std::string sid = "own-" + std::to_string(id);
    sample.insert_session(id, sid, "status", "running", sample.time_ago(ago_us), sample.time_ago(ago_us));
    owned.bind_int(1, id);
    owned.bind_double(2, elapsed);
    owned.bind_int(3, uid);
    owned.run();
  };
  for (std::int64_t i = 1; i <= 30; ++i) {  // uid 1000: status takes seconds
    add(1000 + i, 1000, 2 * k_hour_us + i, static_cast<double>(i));
  }
  for (std::int64_t i = 1; i <= 200; ++i) {  // uid 1001, since: 200 runs of a millisecond
    add(2000 + i, 1001, k_hour_us - i, 0.001);
  }
  model::PercentileWindow window;
  window.max_runs = 100;  // fewer than the flood
  const auto p99 = model::command_p99(db, window);
  EXPECT_EQ(p99.p99(1000, "status"), 30.0);
  EXPECT_EQ(p99.p99(1001, "status"), 0.001);
  EXPECT_FALSE(p99.p99(1002, "status"));
  EXPECT_FALSE(p99.p99(std::nullopt, "status"));  // the sample's own: too few
  // Each sender's runs by the index of its sessions, not a scan of all.
  db::Statement plan = db.prepare("EXPLAIN QUERY PLAN " + std::string(model::k_sender_runs_sql));
  ASSERT_TRUE(plan.step());
  EXPECT_NE(std::string(plan.column_text(3)).find("USING INDEX sessions_uid"), std::string::npos)
      << plan.column_text(3);
}

// A command name no git sends (over 128 bytes, up to the 64 KiB a value may
// keep) gets no p99: a sender cannot make the window hold its runs' long
// names.
TEST(CommandPercentiles, ACommandNameOver128BytesHasNone) {
  SampleDatabase sample;
  db::Database& db = sample.writer();
  db::Statement owned =
      db.prepare("UPDATE sessions SET elapsed = 1, status = 'complete', peer_uid = 1000 WHERE id = ?1");
  for (const std::size_t length : {128, 129}) {
    for (std::int64_t i = 0; i < 30; ++i) {
      const std::int64_t id = static_cast<std::int64_t>(length) * 100 + i;
      sample.insert_session(id, "long-" + std::to_string(id), std::string(length, 'x'), "running",
                            sample.time_ago(k_hour_us), sample.time_ago(k_hour_us));
      owned.bind_int(1, id);
      owned.run();
    }
  }
  const auto p99 = model::command_p99(db);
  EXPECT_EQ(p99.p99(1000, std::string(128, 'x')), 1.0);
  EXPECT_FALSE(p99.p99(1000, std::string(129, 'x')));
}

}  // namespace
}  // namespace trace2d::test
