// Stitching sessions: numbering, summaries, completion, and resumption from
// the database after a restart.

#include "daemon/stitch/stitcher.hpp"

#include <gtest/gtest.h>

#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

std::string line(const std::string& sid, const std::string& event, const std::string& rest = "") {
  return R"({"event":")" + event + R"(","sid":")" + sid + R"(","thread":"main","time":"2026-11-21T10:00:0)" +
         std::to_string(std::hash<std::string>{}(event) % 10) + R"(.000000Z")" + rest + "}";
}

class StitcherTest : public ::testing::Test {
 protected:
  std::optional<std::string> text(const std::string& sql) { return m_store.db().query_text(sql); }
  std::optional<std::int64_t> number(const std::string& sql) { return m_store.db().query_int(sql); }

  TempDir m_dir;
  StorePipeline m_store{m_dir};
};

TEST_F(StitcherTest, SummarisesAProcess) {
  const std::string sid = "top";
  m_store.ingest({
      line(sid, "version", R"(,"evt":"3","exe":"2.39.5")"),
      line(sid, "start", R"(,"t_abs":0.001,"argv":["git","commit","-m","a \"quoted\" message"])"),
      line(sid, "cmd_path", R"(,"path":"/usr/bin/git")"),
      line(sid, "def_repo", R"(,"repo":1,"worktree":"/src/a")"),
      line(sid, "def_repo", R"(,"repo":2,"worktree":"/src/submodule")"),
      line(sid, "cmd_name", R"(,"name":"commit","hierarchy":"commit")"),
      line(sid, "cmd_mode", R"(,"name":"amend")"),
      line(sid, "error", R"(,"msg":"oops","fmt":"oops")"),
      line(sid, "error", R"(,"msg":"again","fmt":"again")"),
      line(sid, "exit", R"(,"t_abs":0.25,"code":1)"),
      line(sid, "atexit", R"(,"t_abs":0.26,"code":1)"),
  });
  db::Statement s = m_store.db().prepare(
      "SELECT evt, exe, argv, cmd_path, worktree, cmd_name, hierarchy, cmd_mode, error_count,"
      " exit_code, elapsed, status, event_count, start_time, end_time FROM sessions");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "3");
  EXPECT_EQ(s.column_text(1), "2.39.5");
  EXPECT_EQ(s.column_text(2), R"(["git","commit","-m","a \"quoted\" message"])");
  EXPECT_EQ(s.column_text(3), "/usr/bin/git");
  EXPECT_EQ(s.column_text(4), "/src/a");  // the first repository, not the submodule
  EXPECT_EQ(s.column_text(5), "commit");
  EXPECT_EQ(s.column_text(6), "commit");
  EXPECT_EQ(s.column_text(7), "amend");
  EXPECT_EQ(s.column_int(8), 2);
  EXPECT_EQ(s.column_int(9), 1);
  EXPECT_DOUBLE_EQ(s.column_double(10), 0.26);  // atexit's t_abs wins over exit's
  EXPECT_EQ(s.column_text(11), "complete");
  EXPECT_EQ(s.column_int(12), 11);
  EXPECT_FALSE(s.column_is_null(13));
  EXPECT_FALSE(s.column_is_null(14));
}

// The nickname: the last def_param of the configured key, written with the
// session's row, and kept across later snapshots (update statements share
// the row writer's parameter numbers) and a reload from the database.
TEST_F(StitcherTest, TheNicknameDefParamFillsItsColumn) {
  const std::string sid = "nick";
  m_store.ingest({
      line(sid, "version", R"(,"evt":"3","exe":"2.39.5")"),
      line(sid, "def_param", R"(,"scope":"global","param":"otel.trace2.nickname","value":"old")"),
      line(sid, "def_param", R"(,"scope":"local","param":"otel.trace2.nickname","value":"monorepo")"),
      line(sid, "def_param", R"(,"scope":"local","param":"core.other","value":"x")"),
  });
  EXPECT_EQ(text("SELECT nickname FROM sessions"), "monorepo");
  m_store.ingest({line(sid, "exit", R"(,"t_abs":0.25,"code":0)")});
  EXPECT_EQ(text("SELECT nickname FROM sessions"), "monorepo");
  EXPECT_EQ(text("SELECT status FROM sessions"), "complete");
  {
    // A second pipeline on the same file, as after a restart: the session
    // comes back from the database with its nickname.
    StorePipeline restarted(m_dir);
    restarted.ingest({line(sid, "data", R"(,"category":"c","key":"k","value":"v")")});
  }
  EXPECT_EQ(text("SELECT nickname FROM sessions"), "monorepo");
  EXPECT_EQ(number("SELECT event_count FROM sessions"), 6);  // the late event was written to it

  TempDir other_dir;
  stitch::Stitcher::Options options;
  options.nickname_key = "";  // none
  StorePipeline other(other_dir, options);
  other.ingest({line(sid, "def_param", R"(,"param":"otel.trace2.nickname","value":"monorepo")")});
  EXPECT_EQ(other.db().query_int("SELECT nickname IS NULL FROM sessions"), 1);
}

// Later snapshots of a session update its row in place; an indexed column
// learnt late (brief mode gives no time at first) reaches its index.
TEST_F(StitcherTest, LaterBatchesUpdateTheRowAndItsIndexes) {
  const std::string sid = "20261121T100000.000000Z-Habcdef01-P0000002a";
  m_store.ingest({R"({"event":"version","sid":")" + sid + R"(","thread":"main","evt":"3","exe":"2.39.5"})"});
  EXPECT_EQ(text("SELECT status FROM sessions"), "running");
  EXPECT_EQ(number("SELECT start_time IS NULL FROM sessions"), 1);
  m_store.ingest({line(sid, "start", R"(,"t_abs":0.001,"argv":["git","status"])"),
                  line(sid, "cmd_name", R"(,"name":"status","hierarchy":"status")")});
  m_store.ingest({line(sid, "atexit", R"(,"t_abs":0.2,"code":0)")});
  EXPECT_EQ(text("SELECT status FROM sessions"), "complete");
  EXPECT_EQ(text("SELECT cmd_name FROM sessions"), "status");
  EXPECT_EQ(number("SELECT event_count FROM sessions"), 4);
  EXPECT_EQ(number("SELECT sid_pid FROM sessions"), 42);
  EXPECT_EQ(number("SELECT count(*) FROM sessions INDEXED BY sessions_start_time WHERE start_time > 0"), 1);
  EXPECT_EQ(number("SELECT count(*) FROM sessions"), 1);
  EXPECT_EQ(text("PRAGMA integrity_check"), "ok");
}

// Retention may delete a session's row while the session still talks: the
// next snapshot writes it whole again.
TEST_F(StitcherTest, RowDeletedBetweenBatchesIsWrittenWhole) {
  m_store.ingest({line("pruned", "version"), line("pruned", "start", R"(,"argv":["git","log"])")});
  m_store.db().exec("DELETE FROM sessions");
  m_store.ingest({line("pruned", "atexit", R"(,"t_abs":0.1,"code":0)")});
  EXPECT_EQ(text("SELECT status FROM sessions WHERE sid = 'pruned'"), "complete");
  EXPECT_EQ(text("SELECT argv FROM sessions WHERE sid = 'pruned'"), R"(["git","log"])");
  EXPECT_EQ(number("SELECT event_count FROM sessions WHERE sid = 'pruned'"), 3);
  EXPECT_EQ(number("SELECT first_received IS NOT NULL FROM sessions WHERE sid = 'pruned'"), 1);
}

TEST_F(StitcherTest, CompleteAtExitNotAtEof) {
  ingest::Origin origin{ingest::SourceKind::stream, 7, 100, 1000};
  m_store.ingest({line("p", "version"), line("p", "atexit", R"(,"t_abs":0.1,"code":0)")}, origin);
  EXPECT_EQ(text("SELECT status FROM sessions"), "complete");
  m_store.end_channel(7);  // EOF long after atexit changes nothing
  EXPECT_EQ(text("SELECT status FROM sessions"), "complete");
  EXPECT_EQ(number("SELECT peer_pid FROM sessions"), 100);
  EXPECT_EQ(number("SELECT peer_uid FROM sessions"), 1000);
}

TEST_F(StitcherTest, EofWithoutATerminalEventIsIncomplete) {
  ingest::Origin origin{ingest::SourceKind::stream, 9, {}, {}};
  m_store.ingest({line("killed", "version"), line("killed", "start", R"(,"argv":["git"])")}, origin);
  EXPECT_EQ(text("SELECT status FROM sessions"), "running");
  m_store.end_channel(9);
  EXPECT_EQ(text("SELECT status FROM sessions"), "incomplete");
  EXPECT_EQ(number("SELECT elapsed IS NULL FROM sessions"), 1);
}

TEST_F(StitcherTest, AWriterGoneWhileItsConnectionStaysOpenIsIncomplete) {
  const ingest::Origin origin{ingest::SourceKind::stream, 11, 4242, 1000};
  m_store.ingest({line("killed", "version"), line("killed", "start", R"(,"argv":["git"])")}, origin);
  EXPECT_EQ(text("SELECT status FROM sessions"), "running");
  m_store.writer_exited(11);  // a child holds the connection open
  EXPECT_EQ(text("SELECT status FROM sessions"), "incomplete");
  m_store.end_channel(11);  // its EOF later changes nothing
  EXPECT_EQ(text("SELECT status FROM sessions"), "incomplete");
}

TEST_F(StitcherTest, AWriterGoneAfterItsExitChangesNothing) {
  const ingest::Origin origin{ingest::SourceKind::stream, 12, 4242, 1000};
  m_store.ingest({line("done", "version"), line("done", "atexit", R"(,"t_abs":0.1,"code":0)")}, origin);
  m_store.writer_exited(12);
  EXPECT_EQ(text("SELECT status FROM sessions"), "complete");
}

TEST_F(StitcherTest, AWriterGoneKeepsASessionOtherChannelsStillWrite) {
  const ingest::Origin first{ingest::SourceKind::stream, 13, 4242, 1000};
  const ingest::Origin second{ingest::SourceKind::stream, 14, 4243, 1000};
  m_store.ingest({line("shared", "version")}, first);
  m_store.ingest({line("shared", "start", R"(,"argv":["git"])")}, second);
  m_store.writer_exited(13);
  EXPECT_EQ(text("SELECT status FROM sessions"), "running");
}

TEST_F(StitcherTest, SignalCompletesWithItsNumber) {
  m_store.ingest({line("piped", "version"), line("piped", "signal", R"(,"t_abs":0.5,"signo":13)")});
  EXPECT_EQ(text("SELECT status FROM sessions"), "complete");
  EXPECT_EQ(number("SELECT signo FROM sessions"), 13);
  EXPECT_EQ(number("SELECT exit_code IS NULL FROM sessions"), 1);
}

TEST_F(StitcherTest, ParentIsThePrefixWhetherOrNotItExists) {
  m_store.ingest({line("a/b/c", "version"), line("a", "version"), line("x//y", "version")});
  EXPECT_EQ(text("SELECT parent_sid FROM sessions WHERE sid = 'a/b/c'"), "a/b");
  EXPECT_EQ(text("SELECT root_sid FROM sessions WHERE sid = 'a/b/c'"), "a");
  EXPECT_EQ(number("SELECT depth FROM sessions WHERE sid = 'a/b/c'"), 2);
  EXPECT_EQ(number("SELECT parent_sid IS NULL FROM sessions WHERE sid = 'a'"), 1);
  EXPECT_EQ(text("SELECT parent_sid FROM sessions WHERE sid = 'x//y'"), "x/");
  EXPECT_EQ(number("SELECT count(*) FROM sessions"), 3);
}

TEST_F(StitcherTest, InterleavedSessionsOnOneChannelKeepTheirOwnOrder) {
  ingest::Origin origin{ingest::SourceKind::stream, 3, {}, {}};
  std::vector<std::string> lines;
  for (int i = 0; i < 10; ++i) {
    lines.push_back(line(i % 2 == 0 ? "even" : "odd", "data", R"(,"key":"n","value":")" + std::to_string(i) + "\""));
  }
  m_store.ingest(lines, origin);
  db::Statement s = m_store.db().prepare("SELECT seq, value FROM events WHERE sid = 'odd' ORDER BY seq");
  for (int expected = 1; expected < 10; expected += 2) {
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.column_int(0), expected / 2);
    EXPECT_EQ(s.column_text(1), std::to_string(expected));
  }
  EXPECT_FALSE(s.step());
}

TEST_F(StitcherTest, ResumesAStoredSessionAfterEviction) {
  m_store.ingest({line("long", "version"), line("long", "start", R"(,"argv":["git","gc"])")});
  m_store.end_channel(0);
  ASSERT_EQ(m_store.stitcher().live_sessions(), 1u);
  m_store.stitcher().evict(1000, proto::unix_now_us() + 3600LL * 1000000);
  ASSERT_EQ(m_store.stitcher().live_sessions(), 0u);
  // More events for the same SID: found in the database, numbering goes on.
  m_store.ingest({line("long", "atexit", R"(,"t_abs":1.5,"code":0)")});
  EXPECT_EQ(number("SELECT count(*) FROM sessions"), 1);
  EXPECT_EQ(number("SELECT event_count FROM sessions"), 3);
  EXPECT_EQ(number("SELECT max(seq) FROM events"), 2);
  EXPECT_EQ(text("SELECT status FROM sessions"), "complete");
  EXPECT_EQ(text("SELECT argv FROM sessions"), R"(["git","gc"])");
}

TEST_F(StitcherTest, RunningSessionsAreNotEvicted) {
  ingest::Origin origin{ingest::SourceKind::stream, 5, {}, {}};
  m_store.ingest({line("open", "version")}, origin);
  m_store.stitcher().evict(1000, proto::unix_now_us() + 3600LL * 1000000);
  EXPECT_EQ(m_store.stitcher().live_sessions(), 1u);
}

// Memory: a finished session whose connection closed can get nothing more,
// so it goes as soon as its row is committed; a datagram session (no
// connection that ends) lingers a while for late events.
TEST_F(StitcherTest, EndedConnectionsSessionsGoAtOnceDatagramOnesLinger) {
  const ingest::Origin stream{ingest::SourceKind::stream, 5, {}, {}};
  const ingest::Origin dgram{ingest::SourceKind::dgram, 0, {}, {}};
  m_store.ingest({line("s", "version"), line("s", "atexit", R"(,"t_abs":0.1,"code":0)")}, stream);
  m_store.ingest({line("d", "version"), line("d", "atexit", R"(,"t_abs":0.1,"code":0)")}, dgram);
  m_store.end_channel(5);
  ASSERT_EQ(m_store.stitcher().live_sessions(), 2u);
  const std::int64_t now = proto::unix_now_us();
  m_store.stitcher().evict(1000, now);
  EXPECT_EQ(m_store.stitcher().live_sessions(), 1u) << "the stream session went, the datagram one stayed";
  m_store.stitcher().evict(1000, now + 3600LL * 1000000);
  EXPECT_EQ(m_store.stitcher().live_sessions(), 0u);
  EXPECT_EQ(number("SELECT count(*) FROM sessions WHERE status = 'complete'"), 2);
}

TEST_F(StitcherTest, NewSessionsGetFreshKeysAfterARestart) {
  m_store.ingest({line("first", "version")});
  {
    // A second pipeline on the same file, as after a restart.
    StorePipeline restarted(m_dir);
    restarted.ingest({line("second", "version"), line("first", "atexit", R"(,"code":0)")});
  }
  EXPECT_EQ(number("SELECT count(DISTINCT id) FROM sessions"), 2);
  EXPECT_EQ(number("SELECT event_count FROM sessions WHERE sid = 'first'"), 2);
}

}  // namespace
}  // namespace trace2d::test
