// Retention deletes whole sessions, oldest first, never running ones; the
// per-uid limiter admits bursts and drops a flood, per uid.

#include "daemon/store/retention.hpp"

#include <gtest/gtest.h>

#include "daemon/pipeline/uid_rate_limiter.hpp"
#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

class RetentionTest : public ::testing::Test {
 protected:
  // A session of `events` events, first and last seen `hours_ago`.
  void add_session(const std::string& sid, int events, int hours_ago, bool running = false) {
    std::vector<std::string> lines;
    for (int i = 0; i < events; ++i) {
      lines.push_back(R"({"event":"data","sid":")" + sid + R"(","thread":"main","key":"k","value":")" +
                      std::string(200, 'x') + R"("})");
    }
    if (!running) {
      lines.push_back(R"({"event":"atexit","sid":")" + sid + R"(","t_abs":0.1,"code":0})");
    }
    ASSERT_TRUE(m_store.ingest(lines).empty());
    const std::string when = proto::format_utc_timestamp(proto::unix_now_us() - hours_ago * 3600LL * 1000000);
    m_store.db().exec("UPDATE sessions SET first_received = '" + when + "', last_received = '" + when +
                      "' WHERE sid = '" + sid + "'");
  }
  std::int64_t count(const std::string& sql) { return m_store.db().query_int(sql).value_or(-1); }

  TempDir m_dir;
  StorePipeline m_store{m_dir};
};

TEST_F(RetentionTest, DeletesSessionsOlderThanTheMaxAgeWithEverythingTheyOwn) {
  add_session("ancient", 10, 48);
  add_session("old-but-running", 10, 48, true);
  add_session("recent", 10, 1);
  store::Retention retention(m_store.db(), {std::chrono::hours(24), 0, 20000});
  EXPECT_TRUE(retention.step());
  EXPECT_FALSE(retention.step());  // nothing left to do
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'ancient'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE sid = 'ancient'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM sessions"), 2);
  EXPECT_EQ(count("SELECT count(*) FROM event_store"), 21);  // 11 + 10: running kept whole
  EXPECT_EQ(retention.sessions_deleted(), 1u);
  EXPECT_EQ(m_store.db().query_text("PRAGMA integrity_check"), "ok");
}

TEST_F(RetentionTest, KeepsTheDatabaseUnderItsSizeBoundOldestFirstInSmallSteps) {
  for (int i = 0; i < 40; ++i) {
    add_session("s" + std::to_string(100 + i), 50, 100 - i);  // s100 oldest
  }
  store::Retention probe(m_store.db(), {});
  const std::uint64_t full = probe.used_bytes();
  store::Retention retention(m_store.db(), {std::nullopt, full / 2, 120});
  int steps = 0;
  while (retention.step()) {
    ++steps;
    ASSERT_LT(steps, 100);
  }
  EXPECT_GT(steps, 3);  // 120 events a step: many small transactions
  EXPECT_LE(retention.used_bytes(), full / 2);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 's100'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 's139'"), 1);  // newest kept
  // Oldest first: whatever is left is a suffix of the sessions by age.
  const auto oldest_left = m_store.db().query_text("SELECT min(sid) FROM sessions").value_or("");
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid >= '" + oldest_left + "'"), count("SELECT count(*) FROM sessions"));
  // Incremental vacuum gave the pages back.
  EXPECT_LT(count("PRAGMA freelist_count"), count("PRAGMA page_count") / 2);
}

TEST(UidRateLimiter, AdmitsABurstThenTheRate) {
  pipeline::UidRateLimiter limiter(100);
  std::int64_t now = 1'000'000;
  int admitted = 0;
  for (int i = 0; i < 1000; ++i) {
    admitted += limiter.admit(1000, now) ? 1 : 0;
  }
  EXPECT_EQ(admitted, 200);  // two seconds' worth
  now += 500'000;            // half a second refills 50
  admitted = 0;
  for (int i = 0; i < 100; ++i) {
    admitted += limiter.admit(1000, now) ? 1 : 0;
  }
  EXPECT_EQ(admitted, 50);
  // Another user is not affected.
  EXPECT_TRUE(limiter.admit(1001, now));
  EXPECT_EQ(limiter.counts().at(1000).lines, 1100u);
  EXPECT_EQ(limiter.counts().at(1000).dropped, 850u);
  EXPECT_EQ(limiter.counts().at(1001).dropped, 0u);
}

TEST(UidRateLimiter, ZeroMeansNoLimitButStillCounts) {
  pipeline::UidRateLimiter limiter(0);
  for (int i = 0; i < 10000; ++i) {
    ASSERT_TRUE(limiter.admit(std::nullopt, 0));
  }
  EXPECT_EQ(limiter.counts().at(pipeline::UidRateLimiter::k_unknown_uid).lines, 10000u);
}

}  // namespace
}  // namespace trace2d::test
