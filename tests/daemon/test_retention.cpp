// Retention deletes whole sessions and rejects: by age everything old
// (running sessions once silent that long); by size the biggest sender's
// oldest data first. The per-uid limiter admits bursts and drops a flood,
// per uid.

#include "daemon/store/retention.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "daemon/pipeline/uid_rate_limiter.hpp"
#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

class RetentionTest : public ::testing::Test {
 protected:
  // A session of `events` events of `value_bytes` each, from `uid`, first
  // seen `hours_ago` and last seen `last_hours_ago` (default: the same).
  void add_session(const std::string& sid, int events, int hours_ago, bool running = false,
                   std::optional<std::int64_t> uid = std::nullopt, std::size_t value_bytes = 200,
                   std::optional<int> last_hours_ago = std::nullopt) {
    std::vector<std::string> lines;
    for (int i = 0; i < events; ++i) {
      lines.push_back(R"({"event":"data","sid":")" + sid + R"(","thread":"main","key":"k","value":")" +
                      std::string(value_bytes, 'x') + R"("})");
    }
    if (!running) {
      lines.push_back(R"({"event":"atexit","sid":")" + sid + R"(","t_abs":0.1,"code":0})");
    }
    ingest::Origin origin;
    origin.channel = ++m_channel;
    origin.peer_uid = uid;
    ASSERT_TRUE(m_store.ingest(lines, origin).empty());
    m_store.db().exec("UPDATE sessions SET first_received = '" + ago(hours_ago) + "', last_received = '" +
                      ago(last_hours_ago.value_or(hours_ago)) + "' WHERE sid = '" + sid + "'");
  }
  // A reject row of `bytes` bytes from `uid`, received `hours_ago`.
  void add_reject(std::optional<std::int64_t> uid, std::size_t bytes, int hours_ago) {
    m_store.db().exec("INSERT INTO rejects (received_at, source, peer_uid, reason, raw, size) VALUES ('" +
                      ago(hours_ago) + "', 'stream', " + (uid ? std::to_string(*uid) : "NULL") +
                      ", 'not JSON', zeroblob(" + std::to_string(bytes) + "), " + std::to_string(bytes) + ")");
  }
  static std::string ago(int hours) {
    return proto::format_utc_timestamp(proto::unix_now_us() - hours * 3600LL * 1000000);
  }
  std::int64_t count(const std::string& sql) { return m_store.db().query_int(sql).value_or(-1); }

  TempDir m_dir;
  StorePipeline m_store{m_dir};
  std::uint64_t m_channel = 0;
};

TEST_F(RetentionTest, DeletesSessionsOlderThanTheMaxAgeWithEverythingTheyOwn) {
  add_session("ancient", 10, 48);
  add_session("old-but-running", 10, 48, true);  // silent for two days: its process is gone
  add_session("old-running-still-talking", 10, 48, true, std::nullopt, 200, 1);
  add_session("recent", 10, 1);
  add_reject(65534, 100, 48);
  add_reject(65534, 100, 47);
  add_reject(65534, 100, 1);
  store::Retention retention(m_store.db(), {std::chrono::hours(24), 0, 20000});
  EXPECT_TRUE(retention.step());
  EXPECT_FALSE(retention.step());  // nothing left to do
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'ancient'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE sid = 'ancient'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'old-but-running'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM sessions"), 2);
  EXPECT_EQ(count("SELECT count(*) FROM event_store"), 21);  // 10 (still talking) + 11
  EXPECT_EQ(retention.sessions_deleted(), 2u);
  EXPECT_EQ(retention.rejects_deleted(), 2u);
  EXPECT_EQ(count("SELECT count(*) FROM rejects"), 1);
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

TEST_F(RetentionTest, UnderItsSizeBoundTheFileKeepsSomeFreedPagesForTheNextInserts) {
  for (int i = 0; i < 40; ++i) {
    add_session("s" + std::to_string(100 + i), 50, 100 - i, false, std::nullopt, 2000);
  }
  const std::int64_t page_size = count("PRAGMA page_size");
  store::Retention probe(m_store.db(), {});
  const std::uint64_t cap = probe.used_bytes() * 3 / 4;
  store::Retention retention(m_store.db(), {std::nullopt, cap, 20000});
  int steps = 0;
  while (retention.step()) {
    ASSERT_LT(++steps, 100);
  }
  // Pages in use under the bound less its slack; the file within the bound.
  EXPECT_LE(retention.used_bytes(), cap - retention.slack_bytes());
  const std::int64_t pages = count("PRAGMA page_count");
  EXPECT_LE(static_cast<std::uint64_t>(pages * page_size), cap);
  EXPECT_FALSE(retention.over_bound());
  // What the slack keeps free is filled by the next session, not added to
  // the file.
  ASSERT_GE(static_cast<std::uint64_t>(count("PRAGMA freelist_count") * page_size), page_size * 2);
  add_session("s200", 1, 0);
  EXPECT_EQ(count("PRAGMA page_count"), pages);
  EXPECT_EQ(m_store.db().query_text("PRAGMA integrity_check"), "ok");
}

TEST_F(RetentionTest, OnceIngestIsQuietPagesInUseGoDownToTheHeadroomWhichTheFileKeepsForTheNextBurst) {
  for (int i = 0; i < 40; ++i) {
    add_session("s" + std::to_string(100 + i), 50, 100 - i, false, std::nullopt, 2000);
  }
  const std::int64_t page_size = count("PRAGMA page_size");
  store::Retention probe(m_store.db(), {});
  const std::uint64_t cap = probe.used_bytes() * 3 / 4;
  // Some six sessions' worth of headroom, far more than the 1% slack.
  store::Retention retention(m_store.db(), {std::nullopt, cap, 20000, cap / 5});
  ASSERT_EQ(retention.headroom_bytes(), cap / 5);
  ASSERT_GT(retention.headroom_bytes(), retention.slack_bytes() * 10);
  EXPECT_TRUE(retention.due_while_busy());
  // While batches come, steps delete only back under the slack.
  int steps = 0;
  while (retention.step(false)) {
    ASSERT_LT(++steps, 100);
  }
  EXPECT_FALSE(retention.due_while_busy());
  EXPECT_LE(retention.used_bytes(), cap - retention.slack_bytes());
  EXPECT_GT(retention.used_bytes(), cap - retention.headroom_bytes());
  const std::int64_t busy_deleted = static_cast<std::int64_t>(retention.sessions_deleted());
  // Once ingest is quiet, on down to the headroom, oldest first, each
  // session with everything it owns.
  while (retention.step(true)) {
    ASSERT_LT(++steps, 200);
  }
  EXPECT_GT(static_cast<std::int64_t>(retention.sessions_deleted()), busy_deleted);
  EXPECT_LE(retention.used_bytes(), cap - retention.headroom_bytes());
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 's139'"), 1);
  const auto oldest_left = m_store.db().query_text("SELECT min(sid) FROM sessions").value_or("");
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid >= '" + oldest_left + "'"),
            count("SELECT count(*) FROM sessions"));
  EXPECT_EQ(count("SELECT count(*) FROM event_store WHERE session NOT IN (SELECT id FROM sessions)"), 0);
  // The freed pages stay in the file, within the bound: the next burst
  // fills them without the file growing, and without a step being due.
  const std::int64_t pages = count("PRAGMA page_count");
  EXPECT_LE(static_cast<std::uint64_t>(pages * page_size), cap);
  EXPECT_GE(static_cast<std::uint64_t>(count("PRAGMA freelist_count") * page_size),
            retention.headroom_bytes() - retention.slack_bytes() - 2 * 100000);
  for (int i = 0; i < 3; ++i) {
    add_session("burst" + std::to_string(i), 50, 0, false, std::nullopt, 2000);
  }
  EXPECT_EQ(count("PRAGMA page_count"), pages);
  EXPECT_FALSE(retention.due_while_busy());
  // Past the slack again, a step is due even while batches come.
  for (int i = 3; i < 12; ++i) {
    add_session("burst" + std::to_string(i), 50, 0, false, std::nullopt, 2000);
  }
  EXPECT_TRUE(retention.due_while_busy());
  EXPECT_EQ(m_store.db().query_text("PRAGMA integrity_check"), "ok");
}

TEST_F(RetentionTest, TheHeadroomIsAtLeastTheSlackAndAtMostHalfTheBound) {
  EXPECT_EQ(store::Retention(m_store.db(), {std::nullopt, 1000000, 20000, 0}).headroom_bytes(), 10000u);
  EXPECT_EQ(store::Retention(m_store.db(), {std::nullopt, 1000000, 20000, 50000}).headroom_bytes(), 50000u);
  EXPECT_EQ(store::Retention(m_store.db(), {std::nullopt, 1000000, 20000, 900000}).headroom_bytes(), 500000u);
  // Without a bound nothing is due.
  store::Retention unbounded(m_store.db(), {std::chrono::hours(24), 0, 20000, 50000});
  EXPECT_FALSE(unbounded.due_while_busy());
}

TEST_F(RetentionTest, ADatabaseWithoutIncrementalVacuumDoesNotKeepRetentionBusy) {
  for (int i = 0; i < 20; ++i) {
    add_session("s" + std::to_string(100 + i), 50, 100 - i, false, std::nullopt, 2000);
  }
  // As a database made before trace2d chose incremental auto-vacuum: free
  // pages that no vacuum step can give back.
  m_store.db().exec("PRAGMA auto_vacuum = NONE");
  m_store.db().exec("VACUUM");
  ASSERT_EQ(count("PRAGMA auto_vacuum"), 0);
  m_store.db().exec("DELETE FROM event_store WHERE session IN (SELECT id FROM sessions ORDER BY id LIMIT 10)");
  const std::int64_t free_pages = count("PRAGMA freelist_count");
  ASSERT_GT(free_pages, 100);
  store::Retention probe(m_store.db(), {});
  // Within its bound, its free pages far beyond the slack.
  const std::uint64_t cap = probe.used_bytes() * 6 / 5;
  store::Retention retention(m_store.db(), {std::nullopt, cap, 20000});
  EXPECT_FALSE(retention.step());
  EXPECT_EQ(retention.sessions_deleted(), 0u);
  EXPECT_EQ(count("PRAGMA freelist_count"), free_pages);
}

TEST_F(RetentionTest, OverTheSizeBoundTheBiggestSenderLosesItsOldestDataFirst) {
  constexpr std::int64_t k_victim_uid = 1000;
  constexpr std::int64_t k_attacker_uid = 65534;
  // The victim's sessions are the oldest in the database: oldest-first alone
  // would delete them before anything of the attacker's.
  for (int i = 0; i < 10; ++i) {
    add_session("victim-" + std::to_string(10 + i), 20, 100 - i, false, k_victim_uid);
  }
  // The attacker: big events in sessions it never ends, and big rejects.
  for (int i = 0; i < 20; ++i) {
    add_session("junk-" + std::to_string(10 + i), 5, 50 - i, true, k_attacker_uid, 20000);
    add_reject(k_attacker_uid, 60000, 50 - i);
  }
  EXPECT_GT(count("SELECT stored_bytes FROM sessions WHERE sid = 'junk-10'"), 5 * 20000);
  store::Retention probe(m_store.db(), {});
  const std::uint64_t full = probe.used_bytes();
  const std::int64_t victim_events = count("SELECT sum(event_count) FROM sessions WHERE peer_uid = 1000");
  store::Retention retention(m_store.db(), {std::nullopt, full / 2, 20000});
  int steps = 0;
  while (retention.step()) {
    ASSERT_LT(++steps, 200);
  }
  EXPECT_LE(retention.used_bytes(), full / 2);
  // The victim lost nothing; the attacker lost its oldest, kept its newest.
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE peer_uid = 1000"), 10);
  EXPECT_EQ(count("SELECT count(*) FROM events e JOIN sessions s USING (sid) WHERE s.peer_uid = 1000"),
            victim_events);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'junk-10'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'junk-29'"), 1);
  EXPECT_GT(retention.rejects_deleted(), 0u);
  EXPECT_EQ(count("SELECT count(*) FROM rejects WHERE received_at = (SELECT max(received_at) FROM rejects)"), 1);
  // Oldest first within the attacker's data: what is left is its newest.
  const auto oldest_left = m_store.db().query_text(
      "SELECT min(sid) FROM sessions WHERE peer_uid = 65534").value_or("");
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE peer_uid = 65534 AND sid >= '" + oldest_left + "'"),
            count("SELECT count(*) FROM sessions WHERE peer_uid = 65534"));
  EXPECT_EQ(m_store.db().query_text("PRAGMA integrity_check"), "ok");
}

TEST_F(RetentionTest, AQuietUserLosesDataOnlyOnceItHoldsTheMost) {
  // Two users of equal habits: the bound takes from whichever holds more,
  // so both end near the same share instead of the older one emptied.
  for (int i = 0; i < 30; ++i) {
    add_session("a-" + std::to_string(10 + i), 10, 200 - i, false, 1001, 2000);
    add_session("b-" + std::to_string(10 + i), 10, 100 - i, false, 1002, 2000);
  }
  store::Retention probe(m_store.db(), {});
  const std::uint64_t full = probe.used_bytes();
  store::Retention retention(m_store.db(), {std::nullopt, full / 2, 20000});
  int steps = 0;
  while (retention.step()) {
    ASSERT_LT(++steps, 200);
  }
  const std::int64_t a = count("SELECT count(*) FROM sessions WHERE peer_uid = 1001");
  const std::int64_t b = count("SELECT count(*) FROM sessions WHERE peer_uid = 1002");
  EXPECT_LT(a, 30);
  EXPECT_LT(b, 30);
  EXPECT_LE(std::abs(a - b), 3);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'b-39'"), 1);  // each keeps its latest
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'a-39'"), 1);
}

// The per-uid totals are read once (a scan of every session row, seconds
// at tens of millions of events); after that the writer tells retention
// what each commit added, so a sender that grows is the one that loses.
TEST_F(RetentionTest, WhatIsCommittedAfterTheTotalsWereReadCountsForItsSender) {
  constexpr std::int64_t k_early = 1001;
  constexpr std::int64_t k_late = 1002;
  for (int i = 0; i < 20; ++i) {
    add_session("early-" + std::to_string(10 + i), 10, 100 - i, false, k_early, 2000);
  }
  add_session("late-10", 10, 60, false, k_late, 2000);
  store::Retention probe(m_store.db(), {});
  const std::uint64_t full = probe.used_bytes();
  // Just over the bound: the first step reads the totals and takes a little
  // from the biggest sender, the early one.
  store::Retention retention(m_store.db(), {std::nullopt, full - 4096, 20000});
  ASSERT_TRUE(retention.step());
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE peer_uid = 1002"), 1);
  const std::int64_t early_left = count("SELECT count(*) FROM sessions WHERE peer_uid = 1001");
  EXPECT_LT(early_left, 20);

  // The late sender now stores more than the early one holds, in sessions
  // newer than all of the early one's.
  for (int i = 0; i < 30; ++i) {
    add_session("late-" + std::to_string(20 + i), 10, 50 - i, false, k_late, 2000);
  }
  const std::int64_t late_session = count("SELECT id FROM sessions WHERE sid = 'late-49'");
  const std::int64_t late_bytes =
      count("SELECT sum(stored_bytes) FROM sessions WHERE peer_uid = 1002 AND sid != 'late-10'");
  ASSERT_GT(late_bytes, count("SELECT sum(stored_bytes) FROM sessions WHERE peer_uid = 1001"));
  // What the store writer hands over after the commit of those rows (as one
  // row: only its size counts here).
  store::WriteBatch batch;
  stitch::SessionRecord record;
  record.id = late_session;
  record.peer_uid = k_late;
  batch.sessions.push_back(record);
  store::EventRow row;
  row.session = late_session;
  row.body.size = static_cast<std::uint32_t>(late_bytes - 16);
  batch.events.push_back(row);
  retention.add_committed(batch);

  // Over the bound again (the late sessions took pages): the late sender is
  // now the biggest and loses its oldest session; the early one keeps what
  // it had. Without the hand-over, the totals read before would still name
  // the early sender.
  ASSERT_GT(retention.used_bytes(), full - 4096);
  ASSERT_TRUE(retention.step());
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'late-10'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE peer_uid = 1001"), early_left);
}

// What the storage rule erases leaves its sender's total: events of a
// withheld session in a committed batch are not counted, and what earlier
// batches stored of it is taken off, so that the sender is not charged for
// rows it no longer has.
TEST_F(RetentionTest, WhatTheStorageRuleErasedLeavesItsSendersTotal) {
  constexpr std::int64_t k_big = 1001;
  constexpr std::int64_t k_small = 1002;
  for (int i = 0; i < 10; ++i) {
    add_session("big-" + std::to_string(10 + i), 10, 100 - i, false, k_big, 2000);
  }
  for (int i = 0; i < 4; ++i) {
    add_session("small-" + std::to_string(10 + i), 10, 90 - i, false, k_small, 2000);
  }
  store::Retention probe(m_store.db(), {});
  const std::uint64_t full = probe.used_bytes();
  store::Retention retention(m_store.db(), {std::nullopt, full - 4096, 20000});
  ASSERT_TRUE(retention.step());  // reads the totals; takes from the big sender
  const std::int64_t big_left = count("SELECT count(*) FROM sessions WHERE peer_uid = 1001");
  ASSERT_LT(big_left, 10);
  ASSERT_EQ(count("SELECT count(*) FROM sessions WHERE peer_uid = 1002"), 4);

  // The storage rule erased every big session left; the batch that did so
  // also held a huge event of one of them, which must not count.
  const std::int64_t big_bytes = count("SELECT sum(stored_bytes) FROM sessions WHERE peer_uid = 1001");
  const std::int64_t erased_id = count("SELECT min(id) FROM sessions WHERE peer_uid = 1001");
  store::WriteBatch batch;
  stitch::WithheldRecord withheld;
  withheld.session = erased_id;
  withheld.uid = k_big;
  withheld.first = true;
  batch.withheld.push_back(withheld);
  store::EventRow row;
  row.session = erased_id;
  row.body.size = 1u << 30;
  batch.events.push_back(row);
  retention.add_committed(batch);
  retention.subtract_erased({store::RowWriter::Erased{k_big, big_bytes}});

  // Over the bound again (new rows of a third sender, which the totals do
  // not know of, so they cannot be chosen): the small sender is now the
  // biggest one known.
  for (int i = 0; i < 6; ++i) {
    add_session("third-" + std::to_string(10 + i), 10, 50 - i, false, 1003, 2000);
  }
  ASSERT_GT(retention.used_bytes(), full - 4096);
  ASSERT_TRUE(retention.step());
  EXPECT_LT(count("SELECT count(*) FROM sessions WHERE peer_uid = 1002"), 4);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE peer_uid = 1001"), big_left);
}

// Changed with schema 16: a session's stored_bytes is what its rows take
// in pages (row_cost.hpp), its own row and index entries included, no
// longer its events' text plus 16 bytes each.
TEST_F(RetentionTest, StoredBytesCountEachSessionsEventRowsAndItsOwnRow) {
  add_session("s", 4, 1, false, 1000, 1000);
  EXPECT_GT(count("SELECT row_bytes FROM sessions WHERE sid = 's'"), 0);
  EXPECT_GT(count("SELECT stored_bytes - row_bytes FROM sessions WHERE sid = 's'"),
            count("SELECT sum(length(body) + coalesce(length(raw), 0) + 16) FROM event_store"));
}

TEST_F(RetentionTest, StoredBytesAddUpOverBatches) {
  // The row is written once per batch with what that batch added (and what
  // its own row grew by): a session whose events come in three batches
  // counts them all, once, as the same events in one batch do. (A first
  // session pays for the names they share, and takes the id 1, a shorter
  // integer in a record than 2 and 3.)
  add_session("a", 1, 1, false, 1000, 500);
  add_session("t", 3, 1, true, 1000, 500);
  add_session("t", 2, 1, true, 1000, 500);
  add_session("t", 1, 1, false, 1000, 500);
  add_session("u", 6, 1, false, 1000, 500);
  EXPECT_EQ(count("SELECT event_count FROM sessions WHERE sid = 't'"), 7);
  EXPECT_EQ(count("SELECT event_count FROM sessions WHERE sid = 'u'"), 7);
  EXPECT_EQ(count("SELECT stored_bytes FROM sessions WHERE sid = 't'"),
            count("SELECT stored_bytes FROM sessions WHERE sid = 'u'"));
  EXPECT_EQ(count("SELECT row_bytes FROM sessions WHERE sid = 't'"),
            count("SELECT row_bytes FROM sessions WHERE sid = 'u'"));
}

// Finding 5 of issue 24: one-event sessions with 4,000-byte SIDs took ~13
// KB of pages each (the SID in the row twice, as sid and root_sid, and in
// its primary key) but were charged 39 bytes. Charged by what the rows take,
// the charge is within the stated factor of what dbstat counts.
TEST_F(RetentionTest, LongSidsAreChargedThePagesTheirRowsAndIndexEntriesTake) {
  constexpr int k_sessions = 300;
  for (int i = 0; i < k_sessions; ++i) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%05d-", i);
    const std::string sid = prefix + std::string(4000 - 6, 'S');
    ingest::Origin origin;
    origin.channel = ++m_channel;
    origin.peer_uid = 65534;
    ASSERT_TRUE(m_store.ingest({R"({"event":"version","sid":")" + sid + R"(","evt":"3","exe":"2.39.5"})"}, origin).empty());
  }
  // Every row of these sessions, in the tables and indexes that hold them.
  const std::int64_t pages = count(
      "SELECT sum(pgsize) FROM dbstat WHERE name IN ('sessions', 'event_store', 'names')"
      " OR name IN (SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('sessions', 'event_store', 'names'))");
  const std::int64_t charged = count("SELECT sum(stored_bytes) FROM sessions");
  const std::int64_t per_session = charged / k_sessions;
  EXPECT_GT(per_session, 12000) << "the SID's pages are charged";
  // dbstat also counts slack in pages and the interior pages: the charge is
  // at least 70% of the pages and never more than them (docs/schema.md).
  EXPECT_GE(static_cast<double>(charged), 0.7 * static_cast<double>(pages)) << charged << " of " << pages;
  EXPECT_LE(charged, pages) << charged << " of " << pages;
  RecordProperty("charged_per_page", std::to_string(static_cast<double>(charged) / static_cast<double>(pages)));
  std::printf("charged %lld bytes for %lld bytes of pages (%.2f)\n", static_cast<long long>(charged),
              static_cast<long long>(pages), static_cast<double>(charged) / static_cast<double>(pages));
}

// The same for a git-like session: many small events, regions and children.
TEST_F(RetentionTest, ASessionsChargeIsWithinAFactorOfThePagesItsRowsTake) {
  for (int s = 0; s < 40; ++s) {
    const std::string sid = "20261127T101010.000000Z-H" + std::to_string(100000 + s) + "-P0000abcd";
    std::vector<std::string> lines;
    lines.push_back(R"({"event":"version","sid":")" + sid +
                    R"(","thread":"main","time":"2026-11-27T10:10:10.000000Z","file":"common-main.c","line":38,"evt":"3","exe":"2.39.5"})");
    lines.push_back(R"({"event":"start","sid":")" + sid +
                    R"(","thread":"main","time":"2026-11-27T10:10:10.000010Z","file":"common-main.c","line":39,"t_abs":0.0001,"argv":["git","status","--porcelain"]})");
    for (int r = 0; r < 20; ++r) {
      lines.push_back(R"({"event":"region_enter","sid":")" + sid +
                      R"(","thread":"main","time":"2026-11-27T10:10:10.000100Z","file":"read-cache.c","line":2500,"t_rel":0.0001,"nesting":1,"category":"index","label":"do_read_index","msg":".git/index"})");
      lines.push_back(R"({"event":"region_leave","sid":")" + sid +
                      R"(","thread":"main","time":"2026-11-27T10:10:10.000200Z","file":"read-cache.c","line":2520,"t_rel":0.0002,"nesting":1,"category":"index","label":"do_read_index","msg":".git/index"})");
    }
    for (int c = 0; c < 3; ++c) {
      lines.push_back(R"({"event":"child_start","sid":")" + sid +
                      R"(","thread":"main","time":"2026-11-27T10:10:10.000300Z","file":"run-command.c","line":735,"t_abs":0.0003,"child_id":)" +
                      std::to_string(c) + R"(,"child_class":"hook","hook_name":"post-checkout","use_shell":false,"argv":[".git/hooks/post-checkout","a","b"]})");
      lines.push_back(R"({"event":"child_exit","sid":")" + sid +
                      R"(","thread":"main","time":"2026-11-27T10:10:10.000400Z","file":"run-command.c","line":990,"t_abs":0.0004,"child_id":)" +
                      std::to_string(c) + R"(,"pid":4242,"code":0,"t_rel":0.0001})");
    }
    lines.push_back(R"({"event":"atexit","sid":")" + sid +
                    R"(","thread":"main","time":"2026-11-27T10:10:10.001000Z","file":"trace2/tr2_tgt_event.c","line":201,"t_abs":0.001,"code":0})");
    ingest::Origin origin;
    origin.channel = ++m_channel;
    origin.peer_uid = 1000;
    ASSERT_TRUE(m_store.ingest(lines, origin).empty());
  }
  const std::int64_t pages = count(
      "SELECT sum(pgsize) FROM dbstat WHERE name IN ('sessions', 'event_store', 'region_store', 'child_store', 'names')"
      " OR name IN (SELECT name FROM sqlite_schema WHERE type = 'index'"
      " AND tbl_name IN ('sessions', 'event_store', 'region_store', 'child_store', 'names'))");
  const std::int64_t charged = count("SELECT sum(stored_bytes) FROM sessions");
  std::printf("charged %lld bytes for %lld bytes of pages (%.2f)\n", static_cast<long long>(charged),
              static_cast<long long>(pages), static_cast<double>(charged) / static_cast<double>(pages));
  EXPECT_GE(static_cast<double>(charged), 0.5 * static_cast<double>(pages)) << charged << " of " << pages;
  EXPECT_LE(static_cast<double>(charged), 1.2 * static_cast<double>(pages)) << charged << " of " << pages;
}

// The recipe of finding 5 in small: the victim's older sessions, then a
// sender of one-event sessions with 4,000-byte SIDs; over the bound, the
// long SIDs go and the victim keeps every session.
TEST_F(RetentionTest, OverTheSizeBoundLongSidsGoBeforeTheVictimsSessions) {
  for (int i = 0; i < 20; ++i) {
    add_session("victim-" + std::to_string(10 + i), 20, 100 - i, false, 0);
  }
  for (int i = 0; i < 400; ++i) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%05d-", i);
    const std::string sid = prefix + std::string(4000 - 6, 'S');
    ingest::Origin origin;
    origin.channel = ++m_channel;
    origin.peer_uid = 65534;
    ASSERT_TRUE(m_store.ingest({R"({"event":"version","sid":")" + sid + R"(","evt":"3","exe":"2.39.5"})"}, origin).empty());
  }
  store::Retention probe(m_store.db(), {});
  const std::uint64_t full = probe.used_bytes();
  store::Retention retention(m_store.db(), {std::nullopt, full / 2, 20000});
  int steps = 0;
  while (retention.step()) {
    ASSERT_LT(++steps, 500);
  }
  EXPECT_LE(retention.used_bytes(), full / 2);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE peer_uid = 0"), 20);
  EXPECT_LT(count("SELECT count(*) FROM sessions WHERE peer_uid = 65534"), 300);
}

// The [retention] settings as the daemon starts with them: by age and by
// size, the headroom a share of the bound; ages as the file writes them.
TEST(RetentionSettings, TheDefaultsBoundAgeAndSizeAndAgesReadAsWritten) {
  const store::Retention::Options defaults = store::RetentionSettings{}.options();
  EXPECT_EQ(defaults.max_age, std::chrono::hours(24 * 30));
  EXPECT_EQ(defaults.max_db_bytes, 10ULL << 30);
  EXPECT_EQ(defaults.idle_headroom_bytes, (10ULL << 30) / 100 * 5);
  store::RetentionSettings keep_all{"", 0, 0};
  EXPECT_EQ(keep_all.options().max_age, std::nullopt);
  EXPECT_EQ(store::RetentionSettings::parse_age("90"), std::chrono::seconds(90));
  EXPECT_EQ(store::RetentionSettings::parse_age("15m"), std::chrono::minutes(15));
  EXPECT_EQ(store::RetentionSettings::parse_age("2w"), std::chrono::hours(24 * 14));
  EXPECT_EQ(store::RetentionSettings::parse_age("5200w"), std::chrono::hours(24 * 7 * 5200));
  for (const char* wrong : {"d", "15x", "-1d", "1.5h"}) {
    EXPECT_EQ(store::RetentionSettings::parse_age(wrong), std::nullopt) << wrong;
    EXPECT_NE(store::RetentionSettings::age_problem(wrong).find("must be a duration"), std::string::npos) << wrong;
  }
  // 0 deleted every session as soon as it was stored (some read it as "no
  // bound", as max_db_bytes = 0 is); past 100 years the cutoff's
  // microseconds overflowed.
  for (const char* zero : {"0", "0s", "0d", "00w"}) {
    EXPECT_EQ(store::RetentionSettings::parse_age(zero), std::nullopt) << zero;
    EXPECT_NE(store::RetentionSettings::age_problem(zero).find("must be more than 0"), std::string::npos) << zero;
  }
  for (const char* huge : {"99999999999999999d", "999999999d", "5300w", "3200000000"}) {
    EXPECT_EQ(store::RetentionSettings::parse_age(huge), std::nullopt) << huge;
    EXPECT_NE(store::RetentionSettings::age_problem(huge).find("at most 100 years"), std::string::npos) << huge;
  }
  EXPECT_EQ(store::RetentionSettings::age_problem(""), "");
}

// Under pressure (its uid holds its share of the memory bound) the valve
// admits a burst, then the rate.
TEST(UidRateLimiter, AdmitsABurstThenTheRateUnderPressure) {
  pipeline::UidRateLimiter limiter(100);
  const auto pressed = [](std::int64_t) { return true; };
  std::int64_t now = 1'000'000;
  int admitted = 0;
  for (int i = 0; i < 1000; ++i) {
    admitted += limiter.admit(1000, now, pressed) ? 1 : 0;
  }
  EXPECT_EQ(admitted, 200);  // two seconds' worth
  now += 500'000;            // half a second refills 50
  admitted = 0;
  for (int i = 0; i < 100; ++i) {
    admitted += limiter.admit(1000, now, pressed) ? 1 : 0;
  }
  EXPECT_EQ(admitted, 50);
  // Another user is not affected.
  EXPECT_TRUE(limiter.admit(1001, now, pressed));
  EXPECT_EQ(limiter.counts().at(1000).lines, 1100u);
  EXPECT_EQ(limiter.counts().at(1000).dropped, 850u);
  EXPECT_EQ(limiter.counts().at(1001).dropped, 0u);
}

// Work-conserving: beyond the rate, a line still goes on while the
// pipeline has room (its uid is under its share); only the uid that
// presses is dropped.
TEST(UidRateLimiter, DropsNothingWhileThePipelineHasRoom) {
  pipeline::UidRateLimiter limiter(100);
  const auto pressed_by_1000 = [](std::int64_t uid) { return uid == 1000; };
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(limiter.admit(1001, 1'000'000, pressed_by_1000));
  }
  int admitted = 0;
  for (int i = 0; i < 1000; ++i) {
    admitted += limiter.admit(1000, 1'000'000, pressed_by_1000) ? 1 : 0;
  }
  EXPECT_EQ(admitted, 200);
  EXPECT_EQ(limiter.counts().at(1001).dropped, 0u);
  EXPECT_EQ(limiter.counts().at(1000).dropped, 800u);
  limiter.count_dropped(1001, 5);  // the memory bound's drops count with them
  EXPECT_EQ(limiter.counts().at(1001).lines, 1005u);
  EXPECT_EQ(limiter.counts().at(1001).dropped, 5u);
}

TEST(UidRateLimiter, ZeroMeansNoLimitButStillCounts) {
  pipeline::UidRateLimiter limiter(0);
  for (int i = 0; i < 10000; ++i) {
    ASSERT_TRUE(limiter.admit(std::nullopt, 0, [](std::int64_t) { return true; }));
  }
  EXPECT_EQ(limiter.counts().at(pipeline::UidRateLimiter::k_unknown_uid).lines, 10000u);
}

}  // namespace
}  // namespace trace2d::test
