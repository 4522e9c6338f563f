// The storage rule (Stitcher::Options::storage_drop): sessions of the
// commands it names leave no rows, whenever their name becomes known, and
// are counted per uid and pattern in withheld_stats; everything else is
// stored whole, their child processes included.

#include <gtest/gtest.h>

#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

std::string rule_line(const std::string& sid, const std::string& event, const std::string& rest = "") {
  return R"({"event":")" + event + R"(","sid":")" + sid +
         R"(","thread":"main","time":"2026-11-21T10:00:00.000000Z")" + rest + "}";
}

// A git process's events up to its name; `argv0` is its start's argv[0].
std::vector<std::string> named(const std::string& sid, const std::string& verb, const std::string& argv0 = "git") {
  return {
      rule_line(sid, "version", R"(,"evt":"3","exe":"2.39.5")"),
      rule_line(sid, "start", R"(,"t_abs":0.001,"argv":[")" + argv0 + R"(",")" + verb + R"("])"),
      rule_line(sid, "cmd_name", R"(,"name":")" + verb + R"(","hierarchy":")" + verb + R"(")"),
  };
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

ingest::Origin of_uid(std::int64_t uid) {
  ingest::Origin origin;
  origin.peer_uid = uid;
  return origin;
}

stitch::Stitcher::Options dropping(std::vector<std::string> patterns) {
  stitch::Stitcher::Options options;
  options.storage_drop = std::move(patterns);
  return options;
}

class StorageRuleTest : public ::testing::Test {
 protected:
  std::int64_t number(const std::string& sql) { return m_store.db().query_int(sql).value_or(-1); }
  std::int64_t rows_of(const std::string& sid) {
    return number("SELECT count(*) FROM sessions WHERE sid = '" + sid + "'") +
           number("SELECT count(*) FROM events WHERE sid = '" + sid + "'") +
           number("SELECT count(*) FROM regions WHERE sid = '" + sid + "'") +
           number("SELECT count(*) FROM children WHERE sid = '" + sid + "'");
  }

  TempDir m_dir;
  StorePipeline m_store{m_dir, dropping({"git:status", "git:checkout#branch", "git-remote-https"})};
};

TEST_F(StorageRuleTest, ANamedCommandLeavesNoRowsAndIsCounted) {
  m_store.ingest(
      named("st", "status") +
          std::vector<std::string>{
              rule_line("st", "region_enter", R"(,"nesting":1,"category":"index","label":"refresh")"),
              rule_line("st", "region_leave", R"(,"t_rel":0.01,"nesting":1,"category":"index","label":"refresh")"),
              rule_line("st", "child_start", R"(,"child_id":0,"child_class":"?","use_shell":false,"argv":["x"])"),
              rule_line("st", "exit", R"(,"t_abs":0.02,"code":0)"),
          } +
          named("log", "log") + std::vector<std::string>{rule_line("log", "exit", R"(,"t_abs":0.02,"code":0)")},
      of_uid(1000));
  EXPECT_EQ(rows_of("st"), 0);
  EXPECT_EQ(number("SELECT count(*) FROM events WHERE sid = 'log'"), 4);
  EXPECT_EQ(number("SELECT count(*) FROM withheld_stats"), 1);
  EXPECT_EQ(number("SELECT sessions FROM withheld_stats WHERE uid = 1000 AND rule = 'git:status'"), 1);
  EXPECT_EQ(number("SELECT events FROM withheld_stats WHERE uid = 1000 AND rule = 'git:status'"), 7);
}

// Events before the name were committed in an earlier batch (an open
// region flushed with them): they go when the name comes; later events
// are counted, not stored.
TEST_F(StorageRuleTest, RowsWrittenBeforeTheNameCameAreDeleted) {
  m_store.ingest({
      rule_line("late", "version", R"(,"evt":"3","exe":"2.39.5")"),
      rule_line("late", "start", R"(,"t_abs":0.001,"argv":["git","status"])"),
      rule_line("late", "region_enter", R"(,"nesting":1,"category":"setup","label":"x")"),
  });
  ASSERT_EQ(number("SELECT count(*) FROM sessions WHERE sid = 'late'"), 1);
  ASSERT_EQ(number("SELECT count(*) FROM regions WHERE sid = 'late'"), 1);
  const std::int64_t id = number("SELECT id FROM sessions WHERE sid = 'late'");
  m_store.ingest({rule_line("late", "cmd_name", R"(,"name":"status","hierarchy":"status")")});
  EXPECT_EQ(rows_of("late"), 0);
  EXPECT_EQ(number("SELECT count(*) FROM event_store WHERE session = " + std::to_string(id)), 0);
  m_store.ingest({rule_line("late", "region_leave", R"(,"t_rel":0.01,"nesting":1,"category":"setup","label":"x")"),
                  rule_line("late", "exit", R"(,"t_abs":0.02,"code":0)")});
  EXPECT_EQ(rows_of("late"), 0);
  EXPECT_EQ(number("SELECT sessions FROM withheld_stats"), 1);
  EXPECT_EQ(number("SELECT events FROM withheld_stats"), 6);
}

// cmd_mode comes later than cmd_name (after regions, children): a mode
// pattern withholds from there, and only that mode.
TEST_F(StorageRuleTest, AModePatternWithholdsOnlyThatMode) {
  m_store.ingest(named("co-branch", "checkout") +
                 std::vector<std::string>{
                     rule_line("co-branch", "cmd_mode", R"(,"name":"branch")"),
                     rule_line("co-branch", "exit", R"(,"t_abs":0.02,"code":0)"),
                 } +
                 named("co-path", "checkout") +
                 std::vector<std::string>{
                     rule_line("co-path", "cmd_mode", R"(,"name":"path")"),
                     rule_line("co-path", "exit", R"(,"t_abs":0.02,"code":0)"),
                 });
  EXPECT_EQ(rows_of("co-branch"), 0);
  EXPECT_EQ(number("SELECT count(*) FROM events WHERE sid = 'co-path'"), 5);
  EXPECT_EQ(number("SELECT sessions FROM withheld_stats WHERE rule = 'git:checkout#branch'"), 1);
}

// An "exe" pattern: the program name of argv[0], as trace2receiver takes it.
TEST_F(StorageRuleTest, AnExePatternMatchesTheProgramOfArgv0) {
  m_store.ingest(named("helper", "remote-curl", "/usr/lib/git-core/git-remote-https") +
                 named("plain", "remote-curl", "/usr/lib/git-core/git-remote-http"));
  EXPECT_EQ(rows_of("helper"), 0);
  EXPECT_EQ(number("SELECT count(*) FROM sessions WHERE sid = 'plain'"), 1);
  EXPECT_EQ(number("SELECT sessions FROM withheld_stats WHERE rule = 'git-remote-https'"), 1);
}

// The children of a withheld session are stored; their parent_sid names
// the session that is not there.
TEST_F(StorageRuleTest, ChildrenOfAWithheldSessionAreKept) {
  m_store.ingest(named("top", "fetch") + named("top/mid", "status") + named("top/mid/leaf", "gc"));
  EXPECT_EQ(rows_of("top/mid"), 0);
  EXPECT_EQ(number("SELECT count(*) FROM sessions WHERE sid = 'top'"), 1);
  EXPECT_EQ(number("SELECT count(*) FROM sessions WHERE sid = 'top/mid/leaf' AND parent_sid = 'top/mid'"
                   " AND root_sid = 'top'"), 1);
}

TEST_F(StorageRuleTest, CountedPerUid) {
  m_store.ingest(named("a", "status"), of_uid(1000));
  m_store.ingest(named("b", "status"), of_uid(1001));
  m_store.ingest(named("c", "status"), of_uid(1001));
  EXPECT_EQ(number("SELECT sessions FROM withheld_stats WHERE uid = 1000"), 1);
  EXPECT_EQ(number("SELECT sessions FROM withheld_stats WHERE uid = 1001"), 2);
  EXPECT_EQ(number("SELECT events FROM withheld_stats WHERE uid = 1001"), 6);
}

// A reload replaces the patterns: sessions named from then on follow the new list.
TEST(StorageRuleReload, NewPatternsApplyToNamesThatComeLater) {
  TempDir dir;
  StorePipeline store(dir);
  store.ingest(named("before", "status"));
  store.stitcher().set_storage_drop({"git:status"});
  store.ingest(named("after", "status"));
  store.stitcher().set_storage_drop({});
  store.ingest(named("again", "status"));
  EXPECT_EQ(store.db().query_int("SELECT count(*) FROM sessions WHERE sid IN ('before', 'again')"), 2);
  EXPECT_EQ(store.db().query_int("SELECT count(*) FROM sessions WHERE sid = 'after'"), 0);
  EXPECT_EQ(store.db().query_int("SELECT sessions FROM withheld_stats"), 1);
}

}  // namespace
}  // namespace trace2d::test
