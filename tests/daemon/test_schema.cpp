#include "db/schema.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "db/database_setup.hpp"
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

TEST(Schema, DatabaseFileIsNotWorldReadable) {
  test::TempDir dir;
  Database db = open_for_writing(dir.file("sub/dir/s.db"));
  struct stat st {};
  ASSERT_EQ(::stat(dir.file("sub/dir/s.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

}  // namespace
}  // namespace trace2d::db
