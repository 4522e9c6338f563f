#include "db/schema.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <span>

#include "db/database_setup.hpp"
#include "db/event_types.hpp"
#include "proto/event.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::db {
namespace {

TEST(Schema, FreshDatabaseGetsTheLatestVersion) {
  test::TempDir dir;
  SetupReport report;
  Database db = open_for_writing(dir.file("s.db"), &report);
  EXPECT_EQ(report.migrations_applied, latest_schema_version());
  EXPECT_EQ(current_schema_version(db), latest_schema_version());
  EXPECT_EQ(db.query_int("PRAGMA user_version"), latest_schema_version());
  EXPECT_EQ(db.query_text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(db.query_int("PRAGMA auto_vacuum"), 2);  // incremental
  for (const char* name : {"sessions", "events", "rejects", "problems", "names", "event_store"}) {
    EXPECT_EQ(db.query_int(std::string("SELECT count(*) FROM sqlite_master WHERE name = '") + name + "'"), 1)
        << name;
  }
}

TEST(Schema, ReopeningAppliesNothing) {
  test::TempDir dir;
  { Database first = open_for_writing(dir.file("s.db")); }
  SetupReport report;
  Database again = open_for_writing(dir.file("s.db"), &report);
  EXPECT_EQ(report.migrations_applied, 0);
  EXPECT_EQ(again.query_int("SELECT count(*) FROM schema_version"), latest_schema_version());
}

TEST(Schema, GitsEventTypesHaveTheirFixedIds) {
  test::TempDir dir;
  Database db = open_for_writing(dir.file("s.db"));
  EXPECT_EQ(db.query_int("SELECT count(*) FROM names"), 30);
  EXPECT_EQ(db.query_text("SELECT text FROM names WHERE id = 1"), "version");
  EXPECT_EQ(db.query_text("SELECT text FROM names WHERE id = 22"), "region_enter");
  EXPECT_EQ(db.query_text("SELECT text FROM names WHERE id = 25"), "data_json");
  EXPECT_EQ(db.query_text("SELECT text FROM names WHERE id = 30"), "printf");
  for (int kind = 0; kind < 30; ++kind) {
    Statement name = db.prepare("SELECT text FROM names WHERE id = ?");
    name.bind_int(1, kind + 1);
    ASSERT_TRUE(name.step());
    EXPECT_EQ(name.column_text(0), proto::to_string(static_cast<proto::EventKind>(kind)));
  }
}

// The conditions the model's queries select events by: runs of ids as
// ranges, the rest listed, each id the stored one of its kind.
TEST(Schema, EventTypeConditionsNameTheStoredIds) {
  using proto::EventKind;
  EXPECT_EQ(stored_type(EventKind::version), 1);
  EXPECT_EQ(stored_type(EventKind::printf), 30);
  const std::array scanned = {EventKind::error,       EventKind::cmd_ancestry, EventKind::alias,
                              EventKind::thread_start, EventKind::thread_exit, EventKind::exec,
                              EventKind::exec_result, EventKind::def_param,    EventKind::def_repo,
                              EventKind::data,        EventKind::data_json,    EventKind::timer,
                              EventKind::th_timer,    EventKind::counter,      EventKind::th_counter,
                              EventKind::printf};
  EXPECT_EQ(stored_type_condition("e.type", scanned), "(((1 << e.type) & 2134839936) != 0)");
  const std::array execs = {EventKind::exec, EventKind::exec_result};
  EXPECT_EQ(stored_type_condition("t", execs), "(((1 << t) & 786432) != 0)");
  const std::array threads = {EventKind::thread_start, EventKind::thread_exit, EventKind::exec};
  EXPECT_EQ(stored_type_condition("t", threads), "(((1 << t) & 458752) != 0)");
  EXPECT_EQ(stored_type_condition("t", std::span<const EventKind>()), "0");
  // The names table holds each of them under its id.
  test::TempDir dir;
  Database db = open_for_writing(dir.file("s.db"));
  EXPECT_EQ(db.query_int("SELECT count(*) FROM names t WHERE " + stored_type_condition("t.id", scanned)), 16);
}

TEST(Schema, RefusesADatabaseFromTheFuture) {
  test::TempDir dir;
  {
    Database db = open_for_writing(dir.file("s.db"));
    db.exec("INSERT INTO schema_version VALUES (999, 'x', 'from a newer trace2d')");
  }
  try {
    (void)open_for_writing(dir.file("s.db"));
    FAIL() << "a newer schema must be refused";
  } catch (const SqliteError& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

TEST(Schema, RunningSessionsOfAPreviousRunBecomeIncomplete) {
  test::TempDir dir;
  {
    Database db = open_for_writing(dir.file("s.db"));
    db.exec("INSERT INTO sessions (sid, id, root_sid, depth, status, source, first_received,"
            " last_received) VALUES ('a', 1, 'a', 0, 'running', 'stream', 'x', 'x'),"
            " ('b', 2, 'b', 0, 'complete', 'stream', 'x', 'x')");
  }
  SetupReport report;
  Database db = open_for_writing(dir.file("s.db"), &report);
  EXPECT_EQ(report.sessions_marked_incomplete, 1);
  EXPECT_EQ(db.query_text("SELECT status FROM sessions WHERE sid = 'a'"), "incomplete");
  EXPECT_EQ(db.query_text("SELECT status FROM sessions WHERE sid = 'b'"), "complete");
}

// The plan SQLite chooses for `sql`, one line per step.
std::string plan_of(Database& db, const std::string& sql) {
  Statement explain = db.prepare("EXPLAIN QUERY PLAN " + sql);
  std::string plan;
  while (explain.step()) {
    plan += std::string(explain.column_text(3)) + "\n";
  }
  return plan;
}

TEST(Schema, Version14DropsAnIndexNoQueryUsesAndGivesThePlannerItsStatistics) {
  test::TempDir dir;
  {
    // As trace2d wrote it up to version 13.
    Database db(dir.file("s.db"), OpenMode::read_write_create);
    EXPECT_EQ(apply_migrations(db, 13), 13);
    db.exec("INSERT INTO sessions (sid, id, parent_sid, root_sid, depth, cmd_name, status, source, start_time,"
            " first_received, last_received, sid_pid, peer_uid) VALUES"
            " ('r', 1, NULL, 'r', 0, 'fetch', 'complete', 'stream', '2026-01-02T00:00:00.000000Z', 'x', 'x', 7, 0),"
            " ('r/c', 2, 'r', 'r', 1, 'status', 'complete', 'stream', '2026-01-02T00:00:01.000000Z', 'x', 'x', 8, 0)");
    db.exec("INSERT INTO region_store (session, seq, label_text, elapsed) VALUES (2, 3, 'refresh', 0.5)");
    db.exec("INSERT INTO child_store (session, child_id, pid, argv_key) VALUES (1, 0, 8, 'git')");
    EXPECT_EQ(db.query_int("SELECT count(*) FROM sqlite_master WHERE name = 'sessions_root_sid'"), 1);
  }
  SetupReport report;
  Database db = open_for_writing(dir.file("s.db"), &report);
  EXPECT_EQ(report.migrations_applied, latest_schema_version() - 13);
  EXPECT_EQ(current_schema_version(db), latest_schema_version());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sqlite_master WHERE name = 'sessions_root_sid'"), 0);
  EXPECT_GT(db.query_int("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'sessions'"), 0);
  // The data and the views over it are unchanged.
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions"), 2);
  EXPECT_EQ(db.query_text("SELECT child_sid FROM children WHERE sid = 'r'"), "r/c");
  const std::string regions_of_a_window =
      "SELECT r.label, s.sid FROM regions r JOIN sessions s ON s.sid = r.sid"
      " WHERE s.start_time >= '2026-01-02T00:00:00.500000Z'";
  EXPECT_EQ(db.query_text("SELECT label || ' ' || sid FROM (" + regions_of_a_window + ")"), "refresh r/c");
  // A window of sessions first, then their regions by key: not every region.
  const std::string plan = plan_of(db, regions_of_a_window);
  EXPECT_EQ(plan.find("SEARCH s USING INDEX sessions_start_time"), 0u) << plan;
  EXPECT_EQ(plan.find("SCAN r"), std::string::npos) << plan;
  // trace2d's own lookups keep their indexes.
  EXPECT_NE(plan_of(db, "SELECT id FROM sessions WHERE peer_uid IS 0 ORDER BY first_received LIMIT 1000")
                .find("sessions_uid"),
            std::string::npos);
  EXPECT_NE(plan_of(db, "SELECT child_sid FROM children WHERE sid = 'r'").find("sessions_parent "),
            std::string::npos);
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
}

TEST(Schema, DatabaseFileIsNotWorldReadable) {
  test::TempDir dir;
  Database db = open_for_writing(dir.file("sub/dir/s.db"));
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("sub/dir/s.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

}  // namespace
// Version 16: rows of the old rule (a session under another uid's was
// re-rooted in parent_sid, root_sid and depth) keep their tree in tree_sid
// and get their SID's word back; children.child_sid is its owner's only.
TEST(Schema, Version16KeepsTheOldTreesInTreeSidAndPutsBackWhatTheSidSays) {
  test::TempDir dir;
  {
    Database db(dir.file("s.db"), OpenMode::read_write_create);
    EXPECT_EQ(apply_migrations(db, 15), 15);
    db.exec("INSERT INTO sessions (sid, id, parent_sid, root_sid, depth, status, source, first_received,"
            " last_received, sid_pid, peer_uid) VALUES"
            " ('v', 1, NULL, 'v', 0, 'complete', 'stream', 'x', 'x', 7, 0),"
            " ('v/c-P8', 2, 'v', 'v', 1, 'complete', 'stream', 'x', 'x', 8, 0),"
            " ('v/evil-P8', 3, NULL, 'v/evil-P8', 0, 'complete', 'stream', 'x', 'x', 8, 65534),"
            " ('v/evil-P8/kid', 4, 'v/evil-P8', 'v/evil-P8', 1, 'complete', 'stream', 'x', 'x', NULL, 65534),"
            " ('/', 5, '', '', 1, 'complete', 'stream', 'x', 'x', NULL, 0)");
    db.exec("INSERT INTO child_store (session, child_id, pid, argv_key) VALUES (1, 0, 8, 'git')");
  }
  Database db = open_for_writing(dir.file("s.db"));
  const auto lineage = [&db](const std::string& sid) {
    return db.query_text("SELECT coalesce(parent_sid, '-') || ' ' || root_sid || ' ' || depth || ' ' || tree_sid"
                         " FROM sessions WHERE sid = '" + sid + "'");
  };
  EXPECT_EQ(lineage("v"), "- v 0 v");
  EXPECT_EQ(lineage("v/c-P8"), "v v 1 v");
  EXPECT_EQ(lineage("v/evil-P8"), "v v 1 v/evil-P8");
  EXPECT_EQ(lineage("v/evil-P8/kid"), "v/evil-P8 v 2 v/evil-P8");
  EXPECT_EQ(lineage("/"), "  1 ");
  // Both v/c-P8 and the other uid's v/evil-P8 have v's child's pid: the child is v's owner's.
  EXPECT_EQ(db.query_text("SELECT child_sid FROM children WHERE sid = 'v'"), "v/c-P8");
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
}

// Version 21: the indexes by parent hold children only; children.child_sid
// still finds a child through them, by pid and by command and start.
TEST(Schema, Version21KeepsRootsOutOfTheIndexesByParent) {
  test::TempDir dir;
  {
    Database db(dir.file("s.db"), OpenMode::read_write_create);
    EXPECT_EQ(apply_migrations(db, 20), 20);
    db.exec(
        "INSERT INTO sessions (sid, id, parent_sid, root_sid, depth, status, source, first_received,"
        " last_received, sid_pid, argv_key, process_start_us, peer_uid) VALUES"
        " ('r', 1, NULL, 'r', 0, 'complete', 'stream', 'x', 'x', 7, 'git fetch', 100, 0),"
        " ('q', 2, NULL, 'q', 0, 'complete', 'stream', 'x', 'x', 9, 'git status', 100, 0),"
        " ('r/c-P8', 3, 'r', 'r', 1, 'complete', 'stream', 'x', 'x', 8, 'git gc', 200, 0),"
        " ('r/s-P5', 4, 'r', 'r', 1, 'complete', 'stream', 'x', 'x', 5, 'git repack', 300, 0)");
    // Run directly (git knows the pid), and through a shell (its pid is the shell's).
    db.exec(
        "INSERT INTO child_store (session, child_id, pid, argv_key, start_us, end_us) VALUES"
        " (1, 0, 8, 'git gc', 150, 250), (1, 1, 4, 'git repack', 250, 350)");
    EXPECT_EQ(db.query_int("SELECT sum(ncell) FROM dbstat WHERE name = 'sessions_parent' AND pagetype = 'leaf'"), 4);
  }
  Database db = open_for_writing(dir.file("s.db"));
  EXPECT_EQ(current_schema_version(db), latest_schema_version());
  for (const char* index : {"sessions_parent", "sessions_parent_argv"}) {
    EXPECT_EQ(
        db.query_int(std::string("SELECT sum(ncell) FROM dbstat WHERE name = '") + index + "' AND pagetype = 'leaf'"),
        2)
        << index;
    EXPECT_EQ(db.query_int(std::string("SELECT count(*) FROM sqlite_stat1 WHERE idx = '") + index + "'"), 1) << index;
  }
  EXPECT_EQ(db.query_text("SELECT group_concat(child_sid, ' ') FROM (SELECT child_sid FROM children"
                          " WHERE sid = 'r' ORDER BY child_id)"),
            "r/c-P8 r/s-P5");
  const std::string plan = plan_of(db, "SELECT child_sid FROM children WHERE sid = 'r'");
  EXPECT_NE(plan.find("sessions_parent "), std::string::npos) << plan;
  EXPECT_NE(plan.find("sessions_parent_argv"), std::string::npos) << plan;
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
}

}  // namespace trace2d::db
