// The shared `names` table is bounded per sender: one uid that sends
// thousands of distinct names uses up its own share, and everyone else's
// names (and labels) are stored as before. Nothing is lost either way:
// names without an id are kept inline.

#include "daemon/store/name_table.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

constexpr std::int64_t k_attacker = 65534;
constexpr std::int64_t k_victim = 1000;

TEST(NameTable, EachUidGetsItsOwnShareOfNewNames) {
  store::NameTable names(100, 3);
  store::WriteBatch batch;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(names.intern("a" + std::to_string(i), batch, k_attacker));
  }
  EXPECT_FALSE(names.intern("a3", batch, k_attacker));  // over its share
  EXPECT_FALSE(names.intern("a4", batch, k_attacker));
  EXPECT_EQ(names.refused_for(k_attacker), 2u);
  EXPECT_EQ(names.added_by(k_attacker), 3u);

  // Another uid is untouched, and names already present serve everyone.
  const auto victims = names.intern("v0", batch, k_victim);
  ASSERT_TRUE(victims);
  EXPECT_EQ(names.intern("v0", batch, k_attacker), victims);
  EXPECT_EQ(names.intern("a0", batch, k_victim), names.find("a0"));
  EXPECT_EQ(names.refused_for(k_victim), 0u);
  EXPECT_EQ(names.added_by(k_victim), 1u);
  EXPECT_FALSE(names.find("a3"));

  // Only rows for names that got an id go to the database.
  EXPECT_EQ(batch.names.size(), 4u);
  // Senders without a uid (imports) are bounded by the table alone.
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(names.intern("import" + std::to_string(i), batch));
  }
}

TEST(NameTable, AFullTableRefusesEveryoneButKeepsWhatItHas) {
  store::NameTable names(4, 100);
  store::WriteBatch batch;
  ASSERT_TRUE(names.intern("x", batch, k_victim));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(names.intern("a" + std::to_string(i), batch, k_attacker));
  }
  EXPECT_FALSE(names.intern("new", batch, k_victim));
  EXPECT_TRUE(names.intern("x", batch, k_victim));
}

std::string region(const std::string& sid, const std::string& event, const std::string& thread,
                   const std::string& category, const std::string& label) {
  return R"({"event":")" + event + R"(","sid":")" + sid + R"(","thread":")" + thread +
         R"(","time":"2026-11-21T23:51:01.566003Z","file":"read-cache.c","line":2443,"repo":1,"nesting":1,"category":")" +
         category + R"(","label":")" + label + R"(")" + (event == "region_leave" ? R"(,"t_rel":0.000250)" : "") +
         R"(})";
}

TEST(NameTable, OneUsersFloodOfNamesLeavesAnotherUsersLabelsIntact) {
  TempDir dir;
  StorePipeline store(dir, {}, 300, 50);  // the attacker alone could fill the table
  // The attacker sends far more distinct thread names, categories and
  // labels than its share.
  std::vector<std::string> flood;
  for (int i = 0; i < 200; ++i) {
    const std::string n = std::to_string(i);
    flood.push_back(region("attacker", "region_enter", "th" + n + ":junk", "cat" + n, "label" + n));
  }
  ASSERT_TRUE(store.ingest(flood, from(k_attacker, 1)).empty());
  EXPECT_EQ(store.names().added_by(k_attacker), 50u);
  EXPECT_GT(store.names().refused_for(k_attacker), 0u);

  // The victim's names are new to the table: they still get ids.
  ASSERT_TRUE(store.ingest({region("victim", "region_enter", "main", "index", "do_read_index"),
                            region("victim", "region_leave", "main", "index", "do_read_index")},
                           from(k_victim, 2))
                  .empty());
  db::Statement q = store.db().prepare(
      "SELECT r.category, r.label, r.thread, r.elapsed, s.category IS NOT NULL, s.label IS NOT NULL"
      " FROM regions r JOIN region_store s ON s.session = (SELECT id FROM sessions WHERE sid = r.sid)"
      " AND s.seq = r.enter_seq WHERE r.sid = 'victim'");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0), "index");
  EXPECT_EQ(q.column_text(1), "do_read_index");
  EXPECT_EQ(q.column_text(2), "main");
  EXPECT_DOUBLE_EQ(q.column_double(3), 0.00025);
  EXPECT_EQ(q.column_int(4), 1);  // interned, not inline
  EXPECT_EQ(q.column_int(5), 1);
  EXPECT_FALSE(q.step());

  // The attacker lost nothing either: every region has its names (inline
  // past its share) and every event is stored byte for byte.
  EXPECT_EQ(store.db().query_int("SELECT count(*) FROM regions WHERE sid = 'attacker'"), 200);
  EXPECT_EQ(store.db().query_int("SELECT count(*) FROM regions WHERE sid = 'attacker' AND"
                                 " category = 'cat' || (enter_seq) AND label = 'label' || (enter_seq)"
                                 " AND thread = 'th' || enter_seq || ':junk'"),
            200);
  EXPECT_GT(store.db().query_int("SELECT count(*) FROM region_store WHERE label IS NULL AND label_text IS NOT NULL"),
            100);
  db::Statement events = store.db().prepare("SELECT json FROM events WHERE sid = 'attacker' ORDER BY seq");
  for (const std::string& line : flood) {
    ASSERT_TRUE(events.step());
    EXPECT_EQ(events.column_text(0), line);
  }
  // region_stats groups inline names with interned ones by their text.
  EXPECT_EQ(store.db().query_int("SELECT count FROM region_stats WHERE category = 'index'"), 1);
}

}  // namespace
}  // namespace trace2d::test
