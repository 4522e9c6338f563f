// What one local user can make the stitcher do: sessions belong to the uid
// that opened them, a uid's open sessions are bounded, region stacks are
// bounded, and nothing is refused silently.

#include <gtest/gtest.h>

#include <limits>

#include "daemon/stitch/region_pairer.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

std::vector<std::string> a_whole_process(const std::string& sid, const std::string& verb, int code) {
  return {event_json(sid, "version", R"(,"evt":"3","exe":"2.39.5")"),
          event_json(sid, "start", R"(,"t_abs":0.001,"argv":["git",")" + verb + R"("])"),
          event_json(sid, "cmd_name", R"(,"name":")" + verb + R"(","hierarchy":")" + verb + R"(")"),
          event_json(sid, "exit", R"(,"t_abs":0.25,"code":)" + std::to_string(code)),
          event_json(sid, "atexit", R"(,"t_abs":0.26,"code":)" + std::to_string(code))};
}

class StitcherBounds : public ::testing::Test {
 protected:
  std::optional<std::string> text(const std::string& sql) { return m_store.db().query_text(sql); }
  std::optional<std::int64_t> number(const std::string& sql) { return m_store.db().query_int(sql); }

  TempDir m_dir;
  StorePipeline m_store{m_dir, stitch::Stitcher::Options{std::chrono::milliseconds(2000), 50}};
};

TEST_F(StitcherBounds, AnotherUidCannotRewriteAStoredSession) {
  const std::string victim = "20261121T100000.000000Z-H00000000-P00001000";
  EXPECT_TRUE(m_store.ingest(a_whole_process(victim, "commit", 0), from(1000, 1)).empty());
  m_store.end_channel(1);
  const std::vector<std::string> refused = m_store.ingest(
      {event_json(victim, "cmd_name", R"(,"name":"push","hierarchy":"push")"),
       event_json(victim, "start", R"(,"t_abs":0.001,"argv":["git","push","--force"])"),
       event_json(victim, "atexit", R"(,"t_abs":99,"code":42)")},
      from(2000, 2));
  ASSERT_EQ(refused.size(), 3U);
  EXPECT_NE(refused[0].find("belongs to uid 1000, not to the sender's uid 2000"), std::string::npos) << refused[0];
  EXPECT_EQ(text("SELECT cmd_name FROM sessions"), "commit");
  EXPECT_EQ(text("SELECT argv FROM sessions"), R"(["git","commit"])");
  EXPECT_EQ(number("SELECT exit_code FROM sessions"), 0);
  EXPECT_EQ(number("SELECT event_count FROM sessions"), 5);
}

TEST_F(StitcherBounds, AnotherUidCannotWriteIntoASessionStillInMemory) {
  const std::string victim = "victim-running";
  m_store.ingest({event_json(victim, "version", R"(,"evt":"3","exe":"2.39.5")")}, from(1000, 1));
  const auto refused = m_store.ingest({event_json(victim, "atexit", R"(,"t_abs":1,"code":3)")}, from(2000, 2));
  ASSERT_EQ(refused.size(), 1U);
  EXPECT_EQ(text("SELECT status FROM sessions"), "running");
  EXPECT_EQ(number("SELECT peer_uid FROM sessions"), 1000);
}

TEST_F(StitcherBounds, TheOwnerMayContinueItsSessionOnAnotherConnection) {
  const std::string sid = "mine";
  m_store.ingest({event_json(sid, "version", R"(,"evt":"3","exe":"2.39.5")")}, from(1000, 1));
  EXPECT_TRUE(m_store.ingest({event_json(sid, "atexit", R"(,"t_abs":1,"code":0)")}, from(1000, 2)).empty());
  EXPECT_EQ(text("SELECT status FROM sessions"), "complete");
}

TEST_F(StitcherBounds, AChildUnderAnotherUidsSessionIsARootOfItsOwn) {
  const std::string victim = "victim-root";
  m_store.ingest(a_whole_process(victim, "fetch", 0), from(1000, 1));
  m_store.ingest(a_whole_process(victim + "/own-child", "upload-pack", 0), from(1000, 2));
  m_store.ingest(a_whole_process(victim + "/grafted", "push", 0), from(2000, 3));
  m_store.ingest(a_whole_process(victim + "/grafted/deeper", "gc", 0), from(2000, 4));
  EXPECT_EQ(text("SELECT parent_sid || ' ' || root_sid || ' ' || depth FROM sessions WHERE sid = '" + victim +
                 "/own-child'"),
            victim + " " + victim + " 1");
  // The SID's word in parent_sid, root_sid and depth; its own tree.
  EXPECT_EQ(text("SELECT coalesce(parent_sid, 'none') || ' ' || root_sid || ' ' || depth || ' ' || tree_sid"
                 " FROM sessions WHERE sid = '" + victim + "/grafted'"),
            victim + " " + victim + " 1 " + victim + "/grafted");
  // Its own children hang under it, in its own tree.
  EXPECT_EQ(text("SELECT parent_sid || ' ' || root_sid || ' ' || depth || ' ' || tree_sid FROM sessions WHERE sid = '" +
                 victim + "/grafted/deeper'"),
            victim + "/grafted " + victim + " 2 " + victim + "/grafted");
  EXPECT_EQ(text("SELECT tree_sid FROM sessions WHERE sid = '" + victim + "/own-child'"), victim);
  EXPECT_EQ(number("SELECT count(*) FROM sessions WHERE tree_sid = '" + victim + "'"), 2);
}

// Finding 7 of issue 24: another uid sends the SID that a user's git names
// as its parent (GIT_TRACE2_PARENT_SID) before it runs. The user's session
// keeps what its SID says, and is the top of its own tree, not a part of
// the squatter's.
TEST_F(StitcherBounds, ASquattedParentSidDoesNotCaptureTheOwnersSession) {
  const std::string prefix = "deploy-2026-11-27";
  m_store.ingest({event_json(prefix, "version", R"(,"evt":"3","exe":"2.39.5")")}, from(2000, 1));
  m_store.ingest(a_whole_process(prefix + "/status", "status", 0), from(1000, 2));
  m_store.ingest(a_whole_process(prefix + "/status/child", "rev-parse", 0), from(1000, 3));
  EXPECT_EQ(text("SELECT parent_sid || ' ' || root_sid || ' ' || depth || ' ' || tree_sid || ' ' || peer_uid"
                 " FROM sessions WHERE sid = '" + prefix + "/status'"),
            prefix + " " + prefix + " 1 " + prefix + "/status 1000");
  // Its child is in its tree (the nearest seen ancestor is the same uid's).
  EXPECT_EQ(text("SELECT tree_sid || ' ' || depth FROM sessions WHERE sid = '" + prefix + "/status/child'"),
            prefix + "/status 2");
  EXPECT_EQ(text("SELECT group_concat(peer_uid) FROM sessions WHERE tree_sid = '" + prefix + "'"), "2000");
}

// A session's tree comes from its nearest seen ancestor: levels that sent
// nothing (a GIT_TRACE2_PARENT_SID prefix, a withheld session) are looked
// through, to a bound; past it the SID's root decides.
TEST_F(StitcherBounds, TheNearestSeenAncestorDecidesTheTree) {
  m_store.ingest({event_json("top", "version", R"(,"evt":"3","exe":"2.39.5")")}, from(1000, 1));
  m_store.ingest({event_json("top/a/b/mine", "version", R"(,"evt":"3","exe":"2.39.5")")}, from(1000, 2));
  m_store.ingest({event_json("top/a/b/theirs", "version", R"(,"evt":"3","exe":"2.39.5")")}, from(2000, 3));
  // Under another uid's session that is itself under top: its tree, not top's.
  m_store.ingest({event_json("top/a/b/theirs/x/kid", "version", R"(,"evt":"3","exe":"2.39.5")")}, from(2000, 4));
  // No level of it seen: the SID's root.
  m_store.ingest({event_json("ci-job 42/step 7/git", "version", R"(,"evt":"3","exe":"2.39.5")")}, from(1000, 5));
  std::string deep = "top";
  for (int level = 0; level < 20; ++level) {
    deep += "/" + std::to_string(level);
  }
  m_store.ingest({event_json(deep, "version", R"(,"evt":"3","exe":"2.39.5")")}, from(2000, 6));
  m_store.ingest({event_json(deep + "-own", "version", R"(,"evt":"3","exe":"2.39.5")")}, from(1000, 7));
  EXPECT_EQ(text("SELECT tree_sid FROM sessions WHERE sid = 'top/a/b/mine'"), "top");
  EXPECT_EQ(text("SELECT tree_sid FROM sessions WHERE sid = 'top/a/b/theirs'"), "top/a/b/theirs");
  EXPECT_EQ(text("SELECT tree_sid FROM sessions WHERE sid = 'top/a/b/theirs/x/kid'"), "top/a/b/theirs");
  EXPECT_EQ(text("SELECT tree_sid FROM sessions WHERE sid = 'ci-job 42/step 7/git'"), "ci-job 42");
  // 20 unseen levels: the root (another uid's) decides, whatever lies between.
  EXPECT_EQ(text("SELECT tree_sid FROM sessions WHERE sid = '" + deep + "'"), deep);
  EXPECT_EQ(text("SELECT tree_sid FROM sessions WHERE sid = '" + deep + "-own'"), "top");
  EXPECT_EQ(text("SELECT parent_sid || ' ' || depth FROM sessions WHERE sid = '" + deep + "'"),
            deep.substr(0, deep.rfind('/')) + " 20");
}

// The parent is no longer in memory, only in the database: the catalog
// says whose it is.
TEST_F(StitcherBounds, AStoredParentOfAnotherUidMakesAChildARootOfItsOwnAfterEviction) {
  const std::string victim = "victim-stored";
  m_store.ingest(a_whole_process(victim, "commit", 0), from(1000, 1));
  m_store.end_channel(1);
  m_store.stitcher().evict(std::numeric_limits<std::uint64_t>::max(), proto::unix_now_us() + 60'000'000);
  ASSERT_EQ(m_store.stitcher().live_sessions(), 0U);
  m_store.ingest(a_whole_process(victim + "/after", "push", 0), from(2000, 2));
  m_store.ingest(a_whole_process(victim + "/mine", "gc", 0), from(1000, 3));
  EXPECT_EQ(text("SELECT tree_sid FROM sessions WHERE sid = '" + victim + "/after'"), victim + "/after");
  EXPECT_EQ(text("SELECT tree_sid FROM sessions WHERE sid = '" + victim + "/mine'"), victim);
}

TEST_F(StitcherBounds, AUidsOpenSessionsAreBoundedAndOthersAreNotAffected) {
  std::vector<std::string> flood;
  for (int i = 0; i < 80; ++i) {
    flood.push_back(event_json("flood-" + std::to_string(i), "version", R"(,"evt":"3","exe":"x")"));
  }
  const auto refused = m_store.ingest(flood, from(2000, 1));
  ASSERT_EQ(refused.size(), 30U);  // the bound is 50 in this fixture
  EXPECT_NE(refused.front().find("too many open sessions for uid 2000 (limit 50)"), std::string::npos);
  EXPECT_TRUE(m_store.ingest(a_whole_process("victim", "status", 0), from(1000, 2)).empty());
  EXPECT_EQ(text("SELECT status FROM sessions WHERE sid = 'victim'"), "complete");
  // Once its connection ends and its sessions are committed, the uid may open new ones.
  m_store.end_channel(1);
  m_store.stitcher().evict(1000, proto::unix_now_us());
  EXPECT_TRUE(m_store.ingest({event_json("later", "version", R"(,"evt":"3","exe":"x")")}, from(2000, 3)).empty());
}

TEST_F(StitcherBounds, ManySidsOnOneChannelAllEndWithIt) {
  std::vector<std::string> lines;
  for (int i = 0; i < 40; ++i) {
    lines.push_back(event_json("s" + std::to_string(i), "version", R"(,"evt":"3","exe":"x")"));
  }
  for (int i = 0; i < 40; ++i) {  // back again, in another order
    lines.push_back(event_json("s" + std::to_string((i * 7) % 40), "cmd_name", R"(,"name":"x")"));
  }
  EXPECT_TRUE(m_store.ingest(lines, from(1000, 9)).empty());
  m_store.end_channel(9);
  EXPECT_EQ(number("SELECT count(*) FROM sessions WHERE status = 'incomplete' AND event_count = 2"), 40);
}

stitch::RegionRecord region(std::int64_t seq, const std::string& label, const std::string& thread = "main") {
  stitch::RegionRecord r;
  r.seq = seq;
  r.leave_seq = seq;
  r.thread = thread;
  r.category = "c";
  r.label = label;
  r.nesting = 1;
  return r;
}

TEST(RegionPairerBounds, AStackDeeperThanTheBoundIsWrittenAsItComes) {
  stitch::RegionPairer pairer;
  std::vector<stitch::RegionRecord> out;
  const auto deep = stitch::RegionPairer::k_max_depth + 10;
  for (std::size_t i = 0; i < deep; ++i) {
    pairer.enter(region(static_cast<std::int64_t>(i), "r" + std::to_string(i)), out);
  }
  EXPECT_EQ(out.size(), 10U);  // the ones beyond the bound, unclosed
  EXPECT_EQ(pairer.open_regions(), stitch::RegionPairer::k_max_depth);
  for (const auto& r : out) {
    EXPECT_FALSE(r.elapsed.has_value());
    ASSERT_TRUE(r.parent_seq.has_value());  // still under the innermost open one
  }
  // Their leaves stand alone; the open ones still pair.
  out.clear();
  auto leave = region(1000, "r" + std::to_string(deep - 1));
  leave.elapsed = 0.5;
  pairer.leave(leave, out);
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].seq, 1000);
  out.clear();
  leave = region(1001, "r0");
  leave.elapsed = 2.0;
  pairer.leave(leave, out);
  ASSERT_EQ(out.size(), 1U);  // r0 closed; the rest left behind, open
  EXPECT_EQ(out[0].seq, 0);   // r0's enter
  EXPECT_EQ(pairer.open_regions(), stitch::RegionPairer::k_max_depth - 1);
  // The next enter's nesting (1: none open) ends them, unclosed.
  out.clear();
  pairer.enter(region(1002, "after"), out);
  EXPECT_EQ(out.size(), stitch::RegionPairer::k_max_depth - 1);
  EXPECT_EQ(pairer.open_regions(), 1U);
  for (const auto& r : out) {
    EXPECT_FALSE(r.elapsed.has_value());
  }
}

TEST(RegionPairerBounds, OpenRegionsOfASessionAreBoundedAcrossThreads) {
  stitch::RegionPairer pairer;
  std::vector<stitch::RegionRecord> out;
  const std::size_t threads = stitch::RegionPairer::k_max_open / 4 + 10;
  for (std::size_t t = 0; t < threads; ++t) {
    for (int level = 0; level < 4; ++level) {
      pairer.enter(region(static_cast<std::int64_t>(t * 4 + level), "x", "th" + std::to_string(t)), out);
    }
  }
  EXPECT_EQ(pairer.open_regions(), stitch::RegionPairer::k_max_open);
  EXPECT_EQ(out.size(), threads * 4 - stitch::RegionPairer::k_max_open);
}

}  // namespace
}  // namespace trace2d::test
