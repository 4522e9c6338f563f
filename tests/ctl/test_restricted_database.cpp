// The connection the query service runs trace2ctl on for a user who may not
// read the database: every table and view shows that user's rows only, and
// the ways around the views are refused.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "ctl/query/database.hpp"
#include "ctl/query/restricted_database.hpp"
#include "db/sqlite.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

constexpr uid_t k_user = 1000;
constexpr uid_t k_other = 0;
constexpr std::int64_t k_secret_thread = 200;  // names.id only the other user's session uses

// The sample database with owners: sid-old, sid-fetch, sid-recent are the
// user's; sid-nostart and sid-tie the other's. Each per-session and per-uid
// table gets a row of each.
class RestrictedDatabase : public ::testing::Test {
 protected:
  void SetUp() override {
    db::Database& w = m_sample.writer();
    w.exec("UPDATE sessions SET peer_uid = " + std::to_string(k_user) + " WHERE id IN (1, 2, 3);"
           "UPDATE sessions SET peer_uid = " + std::to_string(k_other) + " WHERE id IN (4, 5);"
           "INSERT INTO names (id, text) VALUES (" + std::to_string(k_secret_thread) + ", 'secret-thread');"
           "INSERT INTO event_store (session, seq, type, thread, time_us, body)"
           "  VALUES (5, 0, 3, " + std::to_string(k_secret_thread) + ", 0, ',\"t_abs\":0,\"argv\":[\"git\",\"commit\"]');"
           "INSERT INTO problem_store (session, seq, message) VALUES (3, 0, 'mine'), (5, 0, 'theirs');"
           "INSERT INTO region_store (session, seq, thread, label_text) VALUES (3, 9, 100, 'mine'),"
           "  (5, 9, " + std::to_string(k_secret_thread) + ", 'theirs');"
           "INSERT INTO child_store (session, child_id, argv) VALUES (3, 0, 'mine'), (5, 0, 'theirs');"
           "INSERT INTO rejects (received_at, source, peer_uid, reason, size) VALUES"
           "  ('2026-01-01T00:00:00Z', 'stream', 1000, 'mine', 1), ('2026-01-01T00:00:00Z', 'stream', 0, 'theirs', 1);"
           "INSERT INTO uid_stats (uid, lines, updated_at) VALUES (1000, 7, 'x'), (0, 9, 'x');"
           "INSERT INTO withheld_stats (uid, rule, updated_at) VALUES (1000, 'mine', 'x'), (0, 'theirs', 'x');"
           "INSERT INTO otlp_pending (session_id, queued) VALUES (3, 'x'), (5, 'x');"
           "INSERT INTO file_offsets (key, path, offset, updated_at) VALUES ('k', '/home/other/trace', 0, 'x');");
  }

  db::Database open() {
    return ctl::open_restricted_database(m_sample.path(), k_user, std::chrono::seconds(30));
  }

  // Runs `sql` as the user's own statement; the error message, or "" when
  // it prepared (and ran) without one.
  static std::string user_sql_error(db::Database& db, const std::string& sql) {
    const ctl::UserSqlScope scope(db);
    try {
      db::Statement stmt = db.prepare(sql);
      while (stmt.step()) {
      }
    } catch (const db::SqliteError& e) {
      return e.what();
    }
    return "";
  }

  static std::vector<std::string> column_texts(db::Database& db, const std::string& sql) {
    const ctl::UserSqlScope scope(db);
    db::Statement stmt = db.prepare(sql);
    std::vector<std::string> out;
    while (stmt.step()) {
      out.emplace_back(stmt.column_is_null(0) ? "NULL" : std::string(stmt.column_text(0)));
    }
    return out;
  }

  SampleDatabase m_sample;
};

TEST_F(RestrictedDatabase, EachTableShowsOnlyTheUsersRows) {
  db::Database db = open();
  ASSERT_TRUE(ctl::is_restricted(db));
  EXPECT_EQ(column_texts(db, "SELECT sid FROM sessions ORDER BY id"),
            (std::vector<std::string>{"sid-old", "sid-fetch", "sid-recent"}));
  EXPECT_EQ(column_texts(db, "SELECT DISTINCT session FROM event_store"), std::vector<std::string>{"3"});
  EXPECT_EQ(column_texts(db, "SELECT message FROM problem_store"), std::vector<std::string>{"mine"});
  EXPECT_EQ(column_texts(db, "SELECT label_text FROM region_store"), std::vector<std::string>{"mine"});
  EXPECT_EQ(column_texts(db, "SELECT argv FROM child_store"), std::vector<std::string>{"mine"});
  EXPECT_EQ(column_texts(db, "SELECT reason FROM rejects"), std::vector<std::string>{"mine"});
  EXPECT_EQ(column_texts(db, "SELECT lines FROM uid_stats"), std::vector<std::string>{"7"});
  EXPECT_EQ(column_texts(db, "SELECT rule FROM withheld_stats"), std::vector<std::string>{"mine"});
  EXPECT_EQ(column_texts(db, "SELECT session_id FROM otlp_pending"), std::vector<std::string>{"3"});
  EXPECT_EQ(column_texts(db, "SELECT count(*) FROM file_offsets"), std::vector<std::string>{"0"});
  EXPECT_EQ(column_texts(db, "SELECT count(*) FROM source_stats"), std::vector<std::string>{"0"});
  EXPECT_EQ(column_texts(db, "SELECT count(*) FROM otlp_export"), std::vector<std::string>{"0"});
  // The store's own count, for contrast: the other user's rows are there.
  db::Database whole(m_sample.path(), db::OpenMode::read_only);
  EXPECT_EQ(whole.query_int("SELECT count(*) FROM sessions"), 5);
  EXPECT_EQ(whole.query_int("SELECT count(DISTINCT session) FROM event_store"), 2);
}

TEST_F(RestrictedDatabase, EveryTableOfTheSchemaHasAPolicy) {
  // A table trace2d's schema gains needs a line in row_filter_for(); until
  // then it is unreadable (denied), which this test turns into a failure.
  db::Database whole(m_sample.path(), db::OpenMode::read_only);
  db::Statement tables =
      whole.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'");
  int count = 0;
  while (tables.step()) {
    ++count;
    EXPECT_NE(ctl::row_filter_for(tables.column_text(0)), ctl::RowFilter::denied) << tables.column_text(0);
  }
  EXPECT_GT(count, 10);
}

TEST_F(RestrictedDatabase, ViewsResolveToTheFilteredTables) {
  db::Database db = open();
  // events, problems, regions, children: views of the store, created again
  // over the filtered tables; their names resolve to those, not to the file.
  EXPECT_EQ(column_texts(db, "SELECT DISTINCT sid FROM events"), std::vector<std::string>{"sid-recent"});
  EXPECT_EQ(column_texts(db, "SELECT message FROM problems"), std::vector<std::string>{"mine"});
  EXPECT_EQ(column_texts(db, "SELECT DISTINCT sid FROM regions"), std::vector<std::string>{"sid-recent"});
  EXPECT_EQ(column_texts(db, "SELECT DISTINCT sid FROM children"), std::vector<std::string>{"sid-recent"});
  EXPECT_EQ(column_texts(db, "SELECT count(*) FROM slow_sessions WHERE sid = 'sid-tie'"),
            std::vector<std::string>{"0"});
}

TEST_F(RestrictedDatabase, NamesOnlyThroughTheUsersRows) {
  db::Database db = open();
  // The user's own statements: not the table itself.
  EXPECT_NE(user_sql_error(db, "SELECT text FROM names"), "");
  EXPECT_NE(user_sql_error(db, "SELECT count(*) FROM names WHERE text = 'secret-thread'"), "");
  // Without a column of it, SQLite's check happens past the view: the
  // number of names (everyone's) is all that can be learnt.
  EXPECT_NE(user_sql_error(db, "SELECT max(id) FROM names"), "");
  EXPECT_NE(user_sql_error(db, "SELECT count(*) FROM names WHERE text LIKE 'secret%'"), "");
  // A CTE named like a view that may read names does not unlock it.
  EXPECT_NE(user_sql_error(db, "WITH events AS (SELECT text FROM names) SELECT * FROM events"), "");
  EXPECT_NE(user_sql_error(db, "WITH regions AS (SELECT * FROM names) SELECT * FROM regions"), "");
  // The other user's thread name appears in no view.
  EXPECT_EQ(column_texts(db, "SELECT count(*) FROM events WHERE thread = 'secret-thread'"),
            std::vector<std::string>{"0"});
  EXPECT_EQ(column_texts(db, "SELECT count(*) FROM regions WHERE thread = 'secret-thread'"),
            std::vector<std::string>{"0"});
  // trace2ctl's own statements look names up by the ids of the user's rows.
  db::Statement own = db.prepare("SELECT text FROM names WHERE id = 100");
  ASSERT_TRUE(own.step());
  EXPECT_EQ(own.column_text(0), "main");
}

TEST_F(RestrictedDatabase, WaysAroundTheViewsAreRefused) {
  db::Database db = open();
  const char* const refused[] = {
      "ATTACH '" "/etc/passwd" "' AS x",
      "DETACH store",
      "SELECT * FROM store.sessions",
      "SELECT * FROM main.sessions",
      "SELECT sql FROM sqlite_temp_master",
      "SELECT sql FROM temp.sqlite_schema",
      "PRAGMA table_info(sessions)",
      "PRAGMA database_list",
      "SELECT * FROM pragma_database_list",
      "SELECT * FROM pragma_table_info('sessions')",
      "SELECT * FROM dbstat",
      "SELECT * FROM file_offsets_unknown",
      "CREATE TEMP VIEW mine AS SELECT * FROM sessions",
      "DROP VIEW sessions",
      "INSERT INTO sessions (sid) VALUES ('x')",
      "DELETE FROM sessions",
      "SELECT load_extension('/tmp/x.so')",
      "SELECT fts3_tokenizer('simple')",
      "ANALYZE",
  };
  for (const char* sql : refused) {
    EXPECT_NE(user_sql_error(db, sql), "") << sql;
  }
  // The attached file's schema under the name this connection drew: even
  // knowing it, only a filter view may read a store table.
  const std::string schema = sqlite3_db_name(db.handle(), 2);
  ASSERT_EQ(schema.rfind("store_", 0), 0U) << schema;
  EXPECT_NE(user_sql_error(db, "SELECT * FROM \"" + schema + "\".sessions"), "");
  EXPECT_NE(user_sql_error(db, "SELECT * FROM \"" + schema + "\".events"), "");
  EXPECT_NE(user_sql_error(db, "WITH x AS (SELECT * FROM \"" + schema + "\".sessions) SELECT * FROM x"), "");
  EXPECT_NE(user_sql_error(db, "SELECT * FROM \"" + schema + "\".sqlite_schema"), "");
  // The empty main database: readable, and empty.
  EXPECT_EQ(column_texts(db, "SELECT count(*) FROM main.sqlite_schema"), std::vector<std::string>{"0"});
  // A refused statement leaves the rows filtered.
  EXPECT_EQ(column_texts(db, "SELECT count(*) FROM sessions"), std::vector<std::string>{"3"});
}

TEST_F(RestrictedDatabase, NewColumnsAppearAndUnknownTablesAreDenied) {
  m_sample.writer().exec(
      "ALTER TABLE sessions ADD COLUMN later_column TEXT;"
      "UPDATE sessions SET later_column = sid;"
      "CREATE TABLE later_table (session INTEGER, secret TEXT);"
      "INSERT INTO later_table VALUES (3, 'mine'), (5, 'theirs');");
  db::Database db = open();
  EXPECT_EQ(column_texts(db, "SELECT later_column FROM sessions WHERE id = 3"), std::vector<std::string>{"sid-recent"});
  const std::string error = user_sql_error(db, "SELECT secret FROM later_table");
  EXPECT_NE(error, "");
  // The error names the placeholder, never the attached file's schema.
  EXPECT_EQ(error.find("store_"), std::string::npos) << error;
}

TEST_F(RestrictedDatabase, LookupsOfOneSessionStayLookups) {
  db::Database db = open();
  const auto plan = [&](const std::string& sql) {
    db::Statement stmt = db.prepare("EXPLAIN QUERY PLAN " + sql);
    std::string out;
    while (stmt.step()) {
      out += std::string(stmt.column_text(3)) + "\n";
    }
    return out;
  };
  for (const std::string table : {"event_store", "region_store", "child_store", "problem_store"}) {
    const std::string text = plan("SELECT * FROM " + table + " WHERE session = 3");
    EXPECT_EQ(text.find("SCAN"), std::string::npos) << table << ":\n" << text;
  }
  const std::string sessions = plan("SELECT * FROM sessions ORDER BY first_received DESC");
  EXPECT_NE(sessions.find("sessions_uid"), std::string::npos) << sessions;
}

// A user with no session of their own is told so, not that trace2d
// recorded nothing (the database holds others' sessions).
TEST(Trace2ctlOnlyUid, ALastWithNothingOfTheUsersSaysSoNotThatTheDatabaseIsEmpty) {
  SampleDatabase sample;
  for (const std::string command : {"tree", "show", "export"}) {
    const ProcessResult r = run_ctl({"--db", sample.path(), "--only-uid=4242", command, "--last"});
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.out;
    EXPECT_NE(r.err.find("you have no sessions in the database yet (only your own are visible)"), std::string::npos)
        << command << ": " << r.err;
  }
  const ProcessResult all = run_ctl({"--db", sample.path(), "tree", "--last"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
}

TEST(Trace2ctlOnlyUid, EveryCommandSeesOnlyTheUsersSessions) {
  SampleDatabase sample;
  sample.writer().exec("UPDATE sessions SET peer_uid = CASE WHEN id IN (1, 2, 3) THEN 1000 ELSE 0 END");
  const std::string uid = "--only-uid=1000";
  ProcessResult r = run_ctl({"--db", sample.path(), uid, "sessions", "--format", "tsv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sid-recent"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("sid-tie"), std::string::npos) << r.out;
  r = run_ctl({"--db", sample.path(), uid, "sql", "SELECT count(*) FROM sessions"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find('3'), std::string::npos) << r.out;
  r = run_ctl({"--db", sample.path(), uid, "show", "sid-tie"});
  EXPECT_NE(r.exit_code, 0) << r.out;
  r = run_ctl({"--db", sample.path(), uid, "show", "sid-recent"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_ctl({"--db", sample.path(), uid, "sql", "EXPLAIN QUERY PLAN SELECT * FROM sessions"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("EXPLAIN"), std::string::npos) << r.err;
  r = run_ctl({"--db", sample.path(), uid, "sql", "SELECT * FROM names"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("only your own sessions"), std::string::npos) << r.err;
  r = run_ctl({"--db", sample.path(), uid, "status"});
  EXPECT_EQ(r.err.find("prohibited"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not authorized"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trace2d::test
