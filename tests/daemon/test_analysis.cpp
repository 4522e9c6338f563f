// The analysis model: regions paired per thread, children linked to the
// sessions they started. Checked against real git traces with expectations
// read off the trace files by hand.

#include <gtest/gtest.h>

#include "daemon/stitch/argv_key.hpp"
#include "daemon/stitch/event_clock.hpp"
#include "daemon/stitch/region_pairer.hpp"
#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

using stitch::RegionRecord;

std::vector<std::string> words(std::string_view command) { return stitch::shell_words(command); }

TEST(ArgvKey, ShellWordsLikeSh) {
  EXPECT_EQ(words("git-upload-pack '/tmp/a b/upstream'"),
            (std::vector<std::string>{"git-upload-pack", "/tmp/a b/upstream"}));
  EXPECT_EQ(words(R"(git  status "--short"  x\ y "a\"b" 'c\d')"),
            (std::vector<std::string>{"git", "status", "--short", "x y", "a\"b", "c\\d"}));
  EXPECT_EQ(words("   "), std::vector<std::string>{});
  EXPECT_EQ(words("a''b"), std::vector<std::string>{"ab"});
}

TEST(ArgvKey, ChildAndProcessAgree) {
  const std::vector<std::string_view> child = {"git", "pack-objects", "--revs"};
  const std::vector<std::string_view> process = {"/usr/lib/git-core/git", "pack-objects", "--revs"};
  EXPECT_EQ(stitch::child_argv_key(child, false), stitch::argv_key(process));
  const std::vector<std::string_view> shell = {"git-upload-pack '/srv/r'"};
  const std::vector<std::string_view> upload = {"git-upload-pack", "/srv/r"};
  EXPECT_EQ(stitch::child_argv_key(shell, true), stitch::argv_key(upload));
  EXPECT_NE(stitch::child_argv_key(shell, false), stitch::argv_key(upload));
}

RegionRecord region(std::int64_t seq, std::int64_t nesting, std::string label, std::string thread = "main") {
  RegionRecord r;
  r.seq = seq;
  r.nesting = nesting;
  r.category = "c";
  r.label = std::move(label);
  r.thread = std::move(thread);
  return r;
}

RegionRecord leave(std::int64_t seq, std::int64_t nesting, std::string label, double elapsed,
                   std::string thread = "main") {
  RegionRecord r = region(seq, nesting, std::move(label), std::move(thread));
  r.elapsed = elapsed;
  r.leave_seq = seq;
  return r;
}

TEST(RegionPairer, NestsAndClosesInStackOrder) {
  stitch::RegionPairer pairer;
  std::vector<RegionRecord> out;
  pairer.enter(region(1, 1, "outer"), out);
  pairer.enter(region(2, 2, "inner"), out);
  pairer.leave(leave(3, 2, "inner", 0.1), out);
  pairer.leave(leave(4, 1, "outer", 0.5), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].seq, 2);
  EXPECT_EQ(out[0].parent_seq, 1);
  EXPECT_EQ(out[0].elapsed, 0.1);
  EXPECT_EQ(out[0].leave_seq, 3);
  EXPECT_EQ(out[1].seq, 1);
  EXPECT_FALSE(out[1].parent_seq);
  EXPECT_FALSE(pairer.has_unwritten());
}

TEST(RegionPairer, ToleratesNestingGapsAndLeavesWithoutEnters) {
  stitch::RegionPairer pairer;
  std::vector<RegionRecord> out;
  pairer.enter(region(1, 1, "top"), out);
  pairer.enter(region(2, 3, "deep"), out);  // level 2 was filtered out
  pairer.leave(leave(3, 3, "deep", 0.2), out);
  pairer.leave(leave(4, 2, "never-entered", 0.3), out);
  pairer.leave(leave(5, 1, "top", 1.0), out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].parent_seq, 1);
  EXPECT_EQ(out[1].seq, 4);  // a region of its own, keyed by its leave
  EXPECT_EQ(out[1].parent_seq, 1);
  EXPECT_EQ(out[1].elapsed, 0.3);
  EXPECT_EQ(out[2].seq, 1);
}

TEST(RegionPairer, UnclosedRegionsAreWrittenOpenThenClosedOnce) {
  stitch::RegionPairer pairer;
  std::vector<RegionRecord> out;
  pairer.enter(region(1, 1, "outer"), out);
  pairer.enter(region(2, 2, "forgotten"), out);
  pairer.flush_open(out);  // a batch is handed on meanwhile
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].elapsed);
  EXPECT_FALSE(out[1].elapsed);
  out.clear();
  pairer.leave(leave(3, 1, "outer", 2.0), out);  // closes outer; "forgotten" stays open
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].seq, 1);
  EXPECT_EQ(out[0].elapsed, 2.0);
  out.clear();
  pairer.flush_open(out);
  EXPECT_TRUE(out.empty());  // already written, open
}

// The client's guards: a region left out of order is closed alone; the
// ones entered inside it stay open, and nest what comes after them.
TEST(RegionPairer, ALeaveOutOfOrderClosesItsOwnRegionAndTheOthersStayOpen) {
  stitch::RegionPairer pairer;
  std::vector<RegionRecord> out;
  pairer.enter(region(1, 1, "a"), out);
  pairer.enter(region(2, 2, "b"), out);
  pairer.leave(leave(3, 1, "a", 0.5), out);  // a ends first
  pairer.enter(region(4, 2, "c"), out);      // inside b, which its sender still counts
  pairer.leave(leave(5, 2, "c", 0.1), out);
  pairer.leave(leave(6, 2, "b", 0.9), out);
  ASSERT_EQ(out.size(), 3u);  // each region once, closed
  EXPECT_EQ(out[0].seq, 1);
  EXPECT_EQ(out[0].leave_seq, 3);
  EXPECT_EQ(out[1].seq, 4);
  EXPECT_EQ(out[1].parent_seq, 2);
  EXPECT_EQ(out[1].leave_seq, 5);
  EXPECT_EQ(out[2].seq, 2);
  EXPECT_EQ(out[2].parent_seq, 1);
  EXPECT_EQ(out[2].leave_seq, 6);
  EXPECT_EQ(out[2].elapsed, 0.9);
  EXPECT_EQ(pairer.open_regions(), 0u);
  EXPECT_EQ(pairer.held_bytes(), 0u);
  EXPECT_FALSE(pairer.has_unwritten());
}

// git's leave ends its innermost region: when the inner one's leave was
// lost, the next enter's nesting says the sender has nothing open, and the
// region left behind goes unclosed, not parent to what follows.
TEST(RegionPairer, AnEnterClosesWhatItsSenderNoLongerCountsAsUnclosed) {
  stitch::RegionPairer pairer;
  std::vector<RegionRecord> out;
  pairer.enter(region(1, 1, "outer"), out);
  pairer.enter(region(2, 2, "inner"), out);
  pairer.enter(region(3, 3, "innermost"), out);
  pairer.leave(leave(4, 1, "outer", 0.5), out);  // the two leaves before it were lost
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].seq, 1);
  EXPECT_EQ(pairer.open_regions(), 2u);
  out.clear();
  pairer.enter(region(5, 2, "next"), out);  // one open, says its sender: inner
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].seq, 3);
  EXPECT_FALSE(out[0].elapsed);
  out.clear();
  pairer.leave(leave(6, 2, "next", 0.1), out);
  pairer.enter(region(7, 1, "last"), out);  // none open
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].seq, 5);
  EXPECT_EQ(out[0].parent_seq, 2);
  EXPECT_EQ(out[1].seq, 2);
  EXPECT_FALSE(out[1].elapsed);
  out.clear();
  pairer.leave(leave(8, 1, "last", 0.2), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].parent_seq);
  EXPECT_EQ(pairer.open_regions(), 0u);
  EXPECT_EQ(pairer.held_bytes(), 0u);
  EXPECT_FALSE(pairer.has_unwritten());
}

// A region left behind that was written open already is not written again.
TEST(RegionPairer, ARegionLeftBehindIsWrittenOnce) {
  stitch::RegionPairer pairer;
  std::vector<RegionRecord> out;
  pairer.enter(region(1, 1, "outer"), out);
  pairer.enter(region(2, 2, "inner"), out);
  pairer.flush_open(out);
  ASSERT_EQ(out.size(), 2u);
  out.clear();
  pairer.leave(leave(3, 1, "outer", 0.5), out);
  pairer.enter(region(4, 1, "next"), out);
  ASSERT_EQ(out.size(), 1u);  // outer closed; inner, written open, not again
  EXPECT_EQ(out[0].seq, 1);
  EXPECT_EQ(pairer.open_regions(), 1u);
}

TEST(RegionPairer, ThreadsHaveTheirOwnStacks) {
  stitch::RegionPairer pairer;
  std::vector<RegionRecord> out;
  pairer.enter(region(1, 1, "work", "th01:a"), out);
  pairer.enter(region(2, 1, "work", "th02:b"), out);
  pairer.leave(leave(3, 1, "work", 0.4, "th01:a"), out);
  pairer.leave(leave(4, 1, "work", 0.7, "th02:b"), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].seq, 1);
  EXPECT_EQ(out[0].elapsed, 0.4);
  EXPECT_EQ(out[1].seq, 2);
  EXPECT_EQ(out[1].elapsed, 0.7);
  EXPECT_FALSE(out[1].parent_seq);
}

// Without t_rel: t_abs when both events have it, else their times.
TEST(EventClock, ElapsedByTAbsElseByTime) {
  using stitch::EventClock;
  using stitch::elapsed_between;
  EXPECT_DOUBLE_EQ(elapsed_between({0.25, 1'000'000}, {1.5, 9'000'000}).value_or(-1), 1.25);
  EXPECT_DOUBLE_EQ(elapsed_between({std::nullopt, 1'000'000}, {1.5, 1'300'000}).value_or(-1), 0.3);
  EXPECT_FALSE(elapsed_between({0.25, std::nullopt}, {std::nullopt, 2'000'000}).has_value());  // no pair
  EXPECT_FALSE(elapsed_between({}, {}).has_value());
  // A clock that went backwards gives no duration rather than a negative one.
  EXPECT_FALSE(elapsed_between({2.0, std::nullopt}, {1.0, std::nullopt}).has_value());
  EXPECT_FALSE(elapsed_between({std::nullopt, 5}, {std::nullopt, 4}).has_value());
  EXPECT_DOUBLE_EQ(elapsed_between({std::nullopt, 5}, {std::nullopt, 5}).value_or(-1), 0.0);
}

TEST(RegionPairer, LeaveWithoutTRelIsTimedFromItsEnter) {
  stitch::RegionPairer pairer;
  std::vector<RegionRecord> out;
  RegionRecord enter = region(1, 1, "get");
  enter.at = {0.25, 1'000'000};
  pairer.enter(std::move(enter), out);
  RegionRecord lone = region(2, 1, "never-entered");
  lone.leave_seq = 2;
  lone.at = {0.5, 1'200'000};
  pairer.leave(std::move(lone), out);
  RegionRecord close = region(3, 1, "get");
  close.leave_seq = 3;
  close.at = {1.5, 2'000'000};
  pairer.leave(std::move(close), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].elapsed);  // nothing to measure from
  EXPECT_EQ(out[1].seq, 1);
  EXPECT_DOUBLE_EQ(out[1].elapsed.value_or(-1), 1.25);
}

class AnalysisTest : public ::testing::Test {
 protected:
  void ingest(const std::string& relative) {
    const auto lines = read_lines(std::string(TRACE2D_TEST_DATA) + "/" + relative);
    ASSERT_FALSE(lines.empty());
    ASSERT_TRUE(m_store.ingest(lines).empty());
  }
  std::optional<std::string> text(const std::string& sql) { return m_store.db().query_text(sql); }
  std::optional<std::int64_t> number(const std::string& sql) { return m_store.db().query_int(sql); }

  TempDir m_dir;
  StorePipeline m_store{m_dir};
};

// Other producers, in the shapes their sources write (tests/data/README.md).
TEST_F(AnalysisTest, GitCredentialManagerSession) {
  ingest("producers/gcm_get.jsonl");
  const std::string sid = "20261121T100004.000180Z-H0a7c9cdf-P00004000/9d3b1a5e-6f2c-4c1d-8e7a-3b5f0c2d4e6a";
  EXPECT_EQ(number("SELECT count(*) FROM problems"), 0);
  EXPECT_EQ(text("SELECT start_time || ' ' || end_time || ' ' || elapsed || ' ' || status || ' ' || exe ||"
                 " ' ' || parent_sid || ' ' || depth FROM sessions WHERE sid = '" + sid + "'"),
            "2026-11-21T10:00:04.203451Z 2026-11-21T10:00:06.000000Z 1.9481813 complete 2.6.1 "
            "20261121T100004.000180Z-H0a7c9cdf-P00004000 1");
  // No t_rel on its region_leave: timed by the t_abs of enter and leave.
  EXPECT_EQ(text("SELECT group_concat(label || '=' || round(elapsed, 7) || '/' || coalesce(msg, '-'), ' ')"
                 " FROM (SELECT * FROM regions ORDER BY enter_seq)"),
            "get device code=1.1999999/get device code save credential=0.25/-");
  EXPECT_EQ(text("SELECT child_class || ' ' || elapsed || ' ' || pid FROM children"), "git 0.0411034 16404");
  // The region starts at its enter's t_abs, the producer's own count from
  // its start (its `time`, from the process start, says 248182 here: the
  // two clocks are read apart).
  EXPECT_EQ(number("SELECT CAST(round(t_start * 1e6) AS INTEGER) FROM regions WHERE label = 'get device code'"),
            248181);
}

TEST_F(AnalysisTest, RepoSession) {
  ingest("producers/repo_sync.jsonl");
  const std::string sid = "repo-20261121T100000Z-P00003039";
  EXPECT_EQ(number("SELECT count(*) FROM problems"), 0);
  EXPECT_EQ(text("SELECT start_time || ' ' || end_time || ' ' || elapsed || ' ' || status || ' ' || cmd_name ||"
                 " ' ' || hierarchy || ' ' || evt || ' ' || sid_pid FROM sessions WHERE sid = '" + sid + "'"),
            "2026-11-21T10:00:00.412345Z 2026-11-21T10:00:03.125101Z 2.712756 complete sync repo/sync 2 12345");
  // Its git child is under it.
  EXPECT_EQ(text("SELECT cmd_name FROM sessions WHERE parent_sid = '" + sid + "'"), "fetch");
  // data-json is data_json; its value (a Python repr) is a string. A
  // multi-valued setting is data with an array.
  EXPECT_EQ(text("SELECT group_concat(e.event || ':' || d.value_type, ' ') FROM data d JOIN events e USING (sid, seq)"),
            "data:string data_json:string data:json");
  // The times are kept as sent in the JSON, and in git's format in `time`.
  EXPECT_EQ(text("SELECT json_extract(json, '$.time') || ' ' || time FROM events WHERE sid = '" + sid +
                 "' AND event = 'data'"),
            "2026-11-21T10:00:03+00:00Z 2026-11-21T10:00:03.000000Z");
}

// git's cmd_name names the run whichever comes first; repo's command only
// when git's is absent.
TEST_F(AnalysisTest, GitsCmdNameWinsOverACommandEvent) {
  ASSERT_TRUE(m_store
                  .ingest({R"({"event":"cmd_name","sid":"a","name":"fetch","hierarchy":"fetch"})",
                           R"({"event":"command","sid":"a","name":"repo","subcommands":["sync"]})",
                           R"({"event":"command","sid":"b","name":"repo","subcommands":["sync"]})",
                           R"({"event":"cmd_name","sid":"b","name":"fetch"})",
                           R"({"event":"command","sid":"c","name":"repo","subcommands":["manifest","-o"]})"})
                  .empty());
  EXPECT_EQ(text("SELECT group_concat(sid || '=' || cmd_name || ',' || coalesce(hierarchy, '-'), ' ') FROM sessions"),
            "a=fetch,fetch b=fetch,repo/sync c=manifest -o,repo/manifest/-o");
}

TEST_F(AnalysisTest, StatusRegions) {
  ingest("traces/status.jsonl");
  EXPECT_EQ(number("SELECT count(*) FROM regions"), number("SELECT count(*) FROM events WHERE event = 'region_enter'"));
  EXPECT_EQ(number("SELECT count(*) FROM regions WHERE elapsed IS NULL"), 0);
  // From the trace: do_read_index left with t_rel 0.000236, cache_tree/read
  // (0.000011) inside it; index/refresh took 0.014065 at top level.
  db::Statement s = m_store.db().prepare(
      "SELECT r.nesting, r.elapsed, r.t_start, p.label FROM regions r LEFT JOIN regions p ON p.id = r.parent_region"
      " WHERE r.category = ? AND r.label = ?");
  auto check = [&](const char* category, const char* label, std::int64_t nesting, double elapsed,
                   const char* parent) {
    s.bind_text(1, category);
    s.bind_text(2, label);
    ASSERT_TRUE(s.step()) << label;
    EXPECT_EQ(s.column_int(0), nesting) << label;
    EXPECT_DOUBLE_EQ(s.column_double(1), elapsed) << label;
    EXPECT_GT(s.column_double(2), 0.0) << label;
    if (parent == nullptr) {
      EXPECT_TRUE(s.column_is_null(3)) << label;
    } else {
      EXPECT_EQ(s.column_text(3), parent) << label;
    }
    s.reset();
  };
  check("index", "do_read_index", 1, 0.000236, nullptr);
  check("cache_tree", "read", 2, 0.000011, "do_read_index");
  check("index", "refresh", 1, 0.014065, nullptr);
  check("status", "worktrees", 1, 0.000073, nullptr);
  // t_start: enter time minus process start (start's time - t_abs).
  EXPECT_NEAR(*m_store.db().query_int("SELECT CAST(round(t_start * 1e6) AS INTEGER) FROM regions"
                                      " WHERE label = 'do_read_index'"),
              668, 1);
  EXPECT_EQ(number("SELECT count(*) FROM regions WHERE label = 'setup' AND parent_region IS NOT NULL"), 2);
}

TEST_F(AnalysisTest, FetchChildrenAreLinkedToTheirSessions) {
  ingest("traces/fetch.jsonl");
  // child 0 ran through a shell (git reports the shell's pid 5387; upload-pack
  // is P0000150c = 5388): linked by command and time window. The others ran
  // directly: linked by pid.
  db::Statement s = m_store.db().prepare(
      "SELECT c.child_id, c.child_class, c.pid, c.code, k.cmd_name, c.elapsed > 0"
      " FROM children c LEFT JOIN sessions k ON k.sid = c.child_sid"
      " WHERE c.sid = '20261122T000429.651221Z-H0a7c9cdf-P0000150a' ORDER BY c.child_id");
  const std::vector<std::tuple<int, std::string, int, std::string>> expected = {
      {0, "transport/file", 5387, "upload-pack"}, {1, "?", 5392, "unpack-objects"}, {2, "?", 5393, "rev-list"}};
  for (const auto& [id, cls, pid, cmd] : expected) {
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.column_int(0), id);
    EXPECT_EQ(s.column_text(1), cls);
    EXPECT_EQ(s.column_int(2), pid);
    EXPECT_EQ(s.column_int(3), 0);
    EXPECT_EQ(s.column_text(4), cmd);
    EXPECT_EQ(s.column_int(5), 1);
  }
  EXPECT_FALSE(s.step());
  // upload-pack's own child: pack-objects, a grandchild of the fetch.
  EXPECT_EQ(text("SELECT k.cmd_name FROM children c JOIN sessions k ON k.sid = c.child_sid"
                 " JOIN sessions p ON p.sid = c.sid WHERE p.cmd_name = 'upload-pack'"),
            "pack-objects");
  EXPECT_EQ(number("SELECT count(*) FROM children WHERE child_sid IS NULL"), 0);
}

TEST_F(AnalysisTest, HookChildrenAreNotGitAndTheirGitChildrenAreOrphans) {
  ingest("traces/hook_commit.jsonl");
  EXPECT_EQ(text("SELECT hook_name FROM children WHERE child_class = 'hook'"), "pre-commit");
  EXPECT_EQ(number("SELECT child_sid IS NULL FROM children WHERE child_class = 'hook'"), 1);
  EXPECT_EQ(text("SELECT k.cmd_name FROM children c JOIN sessions k ON k.sid = c.child_sid"
                 " WHERE c.child_class = '?'"),
            "maintenance");
  // The hook script ran `git rev-parse`: a child session of the commit that
  // no child_start claims.
  EXPECT_EQ(number("SELECT count(*) FROM sessions s WHERE s.cmd_name = 'rev-parse' AND s.parent_sid IS NOT NULL"
                   " AND NOT EXISTS (SELECT 1 FROM children c WHERE c.child_sid = s.sid)"),
            1);
}

TEST_F(AnalysisTest, ShellAliasChildIsLinked) {
  ingest("traces/alias_shell.jsonl");
  EXPECT_EQ(text("SELECT k.cmd_name FROM children c JOIN sessions k ON k.sid = c.child_sid"
                 " WHERE c.child_class = 'shell_alias'"),
            "status");
  // The failed dashed attempt (pid -1) has no session.
  EXPECT_EQ(number("SELECT child_sid IS NULL FROM children WHERE child_class = 'dashed'"), 1);
  EXPECT_EQ(number("SELECT pid FROM children WHERE child_class = 'dashed'"), -1);
}

TEST_F(AnalysisTest, ThreadedCommand) {
  ingest("synthetic/status_threaded.jsonl");
  EXPECT_EQ(number("SELECT count(*) FROM regions"), 3);
  EXPECT_EQ(number("SELECT count(*) FROM regions WHERE label = 'preload_chunk' AND parent_region IS NULL"), 2);
  db::Statement s = m_store.db().prepare("SELECT thread, elapsed FROM regions WHERE label = 'preload_chunk' ORDER BY thread");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "th01:preload_thread");
  EXPECT_DOUBLE_EQ(s.column_double(1), 0.0015);
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "th02:preload_thread");
  EXPECT_DOUBLE_EQ(s.column_double(1), 0.001);
  db::Statement t = m_store.db().prepare("SELECT thread, elapsed, t_start FROM threads ORDER BY thread");
  ASSERT_TRUE(t.step());
  EXPECT_EQ(t.column_text(0), "th01:preload_thread");
  EXPECT_DOUBLE_EQ(t.column_double(1), 0.00165);
  EXPECT_NEAR(t.column_double(2), 0.0011, 1e-9);  // 1.1 ms after the process started
  ASSERT_TRUE(t.step());
  EXPECT_DOUBLE_EQ(t.column_double(1), 0.00115);
  EXPECT_EQ(number("SELECT count(*) FROM timers WHERE per_thread"), 2);
  EXPECT_EQ(number("SELECT intervals FROM timers WHERE NOT per_thread"), 1200);
  EXPECT_EQ(number("SELECT count FROM counters WHERE thread = 'th01:preload_thread'"), 600);
  EXPECT_EQ(text("SELECT value FROM data WHERE thread = 'th02:preload_thread'"), "1200");
}

TEST_F(AnalysisTest, RealThreadedStatus) {
  // git 2.39 reads the cache tree extension on a thread while the main
  // thread's do_read_index is open: two stacks, no parent across them.
  ingest("traces/status_index_threads.jsonl");
  EXPECT_EQ(text("SELECT thread FROM regions WHERE category = 'cache_tree'"), "th01:unknown");
  EXPECT_EQ(number("SELECT parent_region IS NULL FROM regions WHERE category = 'cache_tree'"), 1);
  db::Statement elapsed = m_store.db().prepare("SELECT elapsed FROM regions WHERE category = 'cache_tree'");
  ASSERT_TRUE(elapsed.step());
  EXPECT_DOUBLE_EQ(elapsed.column_double(0), 0.000024);
  EXPECT_EQ(number("SELECT nesting FROM regions WHERE category = 'cache_tree'"), 1);
  EXPECT_EQ(number("SELECT count(*) FROM regions WHERE thread = 'main' AND label = 'do_read_index'"
                   " AND elapsed IS NOT NULL"),
            1);
  EXPECT_EQ(number("SELECT count(*) FROM regions WHERE elapsed IS NULL"), 0);
}

TEST_F(AnalysisTest, Statistics) {
  ingest("traces/status.jsonl");
  ingest("traces/status_nesting5.jsonl");
  ingest("traces/failing_command.jsonl");
  EXPECT_EQ(number("SELECT runs FROM command_stats WHERE cmd_name = 'status'"), 2);
  EXPECT_EQ(number("SELECT failures FROM command_stats WHERE cmd_name = 'status'"), 0);
  EXPECT_EQ(number("SELECT failures FROM command_stats WHERE cmd_name = 'checkout'"), 1);
  EXPECT_EQ(number("SELECT p50_elapsed <= p90_elapsed AND p90_elapsed <= max_elapsed FROM command_stats"
                   " WHERE cmd_name = 'status'"),
            1);
  EXPECT_EQ(number("SELECT count FROM region_stats WHERE category = 'index' AND label = 'do_read_index'"), 3);  // each command reads the index once
  EXPECT_EQ(text("SELECT cmd_name FROM slow_sessions LIMIT 1"),
            text("SELECT cmd_name FROM sessions ORDER BY elapsed DESC LIMIT 1"));
}

}  // namespace
}  // namespace trace2d::test
