// trace2ctl sql: read-only queries, errors, refused writes.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "db/schema.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

ProcessResult sql(const SampleDatabase& db, const std::string& statement, bool json = false) {
  std::vector<std::string> args{"--db", db.path()};
  if (json) {
    args.emplace_back("--json");
  }
  args.insert(args.end(), {"sql", statement});
  return run_ctl(args);
}

std::int64_t session_count(SampleDatabase& db) {
  return db.writer().query_int("SELECT count(*) FROM sessions").value_or(-1);
}

TEST(Trace2ctlSql, PrintsAnAlignedTable) {
  SampleDatabase db;
  const ProcessResult result =
      sql(db, "SELECT sid, event_count FROM sessions WHERE cmd_name = 'status' ORDER BY id");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  // Numbers are right-aligned; the header is as wide as the widest cell.
  EXPECT_EQ(result.out,
            "sid         event_count\n"
            "----------  -----------\n"
            "sid-old               0\n"
            "sid-recent            5\n");
}

TEST(Trace2ctlSql, ShowsEveryStorageClass) {
  SampleDatabase db;
  const ProcessResult result =
      sql(db,
          "SELECT NULL AS n, 1.5 AS r, 2.0 AS whole, x'00ff' AS b, 'a' || char(10) || 'b' AS t");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = split_lines(result.out);
  ASSERT_EQ(lines.size(), 3u) << result.out;
  EXPECT_EQ(lines[2], R"(   1.5    2.0  x'00ff'  a\nb)");
}

TEST(Trace2ctlSql, JsonKeepsTypes) {
  SampleDatabase db;
  const ProcessResult result = sql(
      db,
      "SELECT NULL AS n, 42 AS i, 1.5 AS r, x'00ff' AS b, 'q\"' || char(9) || 'é' AS t, "
      "CAST(x'ff41' AS TEXT) AS bad_utf8",
      true);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::array rows;
  ASSERT_EQ(parser.parse(result.out).get(rows), simdjson::SUCCESS) << result.out;
  ASSERT_EQ(rows.size(), 1u);
  simdjson::dom::object row = rows.at(0).get_object().value();
  EXPECT_TRUE(row["n"].is_null());
  EXPECT_EQ(row["i"].get_int64().value(), 42);
  EXPECT_DOUBLE_EQ(row["r"].get_double().value(), 1.5);
  EXPECT_EQ(std::string_view(row["b"].get_string().value()), "00ff");
  EXPECT_EQ(std::string_view(row["t"].get_string().value()), "q\"\té");
  EXPECT_EQ(std::string_view(row["bad_utf8"].get_string().value()), "\xEF\xBF\xBD" "A");
}

TEST(Trace2ctlSql, QueriesTheEventsView) {
  SampleDatabase db;
  const ProcessResult result =
      sql(db, "SELECT event, label FROM events WHERE sid = 'sid-recent' AND label IS NOT NULL",
          true);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "[\n{\"event\":\"data\",\"label\":\"note\"}\n]\n");
}

TEST(Trace2ctlSql, BadSqlFailsWithSqlitesMessage) {
  SampleDatabase db;
  ProcessResult result = sql(db, "SELEC sid FROM sessions");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find(R"(near "SELEC": syntax error)"), std::string::npos) << result.err;

  result = sql(db, "SELECT * FROM no_such_table");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("no such table: no_such_table"), std::string::npos) << result.err;

  result = sql(db, "  -- only a comment");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("no SQL statement"), std::string::npos) << result.err;
}

TEST(Trace2ctlSql, ErrorsWhileRunningAreReported) {
  SampleDatabase db;
  const ProcessResult result = sql(db, "SELECT json_extract('{not json', '$.a')");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("malformed JSON"), std::string::npos) << result.err;
}

TEST(Trace2ctlSql, WritesAreRefused) {
  SampleDatabase db;
  for (const std::string& statement : std::vector<std::string>{
           "DELETE FROM sessions", "UPDATE sessions SET status = 'complete'",
           "INSERT INTO names (text) VALUES ('x')", "DROP VIEW events", "CREATE TABLE t (x)",
           "PRAGMA user_version = 9"}) {
    const ProcessResult result = sql(db, statement);
    EXPECT_EQ(result.exit_code, 1) << statement;
    EXPECT_NE(result.err.find("refusing to run a statement that would write"), std::string::npos)
        << statement << ": " << result.err;
  }
  EXPECT_EQ(session_count(db), 5);
  EXPECT_EQ(db.writer().query_int("PRAGMA user_version").value_or(-1), db::latest_schema_version());
}

TEST(Trace2ctlSql, OnlyOneStatementRuns) {
  SampleDatabase db;
  ProcessResult result = sql(db, "SELECT 1; DELETE FROM sessions");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("only one SQL statement"), std::string::npos) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(session_count(db), 5);

  // A trailing semicolon or comment is not a second statement.
  result = sql(db, "SELECT 7 AS seven; -- done\n");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "seven\n-----\n    7\n");
}

// Issue 10: a recursive query ran until it was killed, holding a snapshot
// that kept trace2d from checkpointing (the WAL grew to 395 MB). Every
// trace2ctl query now stops at --timeout (default 30 s) with a clear error.
TEST(Trace2ctlSql, ALongQueryStopsAtTheTimeout) {
  SampleDatabase db;
  const std::string endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
  const ProcessResult result = run_ctl({"--db", db.path(), "--timeout", "0.3", "sql", endless});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("trace2ctl: query stopped: it ran longer than --timeout 0.3 s"), std::string::npos)
      << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_LT(result.seconds, 10.0);
}

TEST(Trace2ctlSql, TheTimeoutDefaultsToThirtySecondsAndZeroMeansNone) {
  const ProcessResult help = run_ctl({"--help"});
  EXPECT_NE(help.out.find("--timeout"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("=30"), std::string::npos) << help.out;
  SampleDatabase db;
  const ProcessResult result = run_ctl({"--db", db.path(), "--timeout", "0", "sql", "SELECT count(*) AS n FROM sessions"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "n\n-\n5\n");
  EXPECT_EQ(run_ctl({"--db", db.path(), "--timeout", "-1", "sessions"}).exit_code, 2);
}

// Issue 10: fts3_tokenizer('simple') returned the address of SQLite's
// tokenizer (a heap pointer, useful to an attacker); with two arguments it
// would install one. Refused however it is spelt or wrapped.
TEST(Trace2ctlSql, Fts3TokenizerIsRefused) {
  SampleDatabase db;
  for (const std::string statement :
       {"SELECT fts3_tokenizer('simple')", "SELECT hex(FTS3_Tokenizer('porter'))",
        "SELECT fts3_tokenizer('simple', x'0000000000000000')",
        "SELECT * FROM (SELECT fts3_tokenizer('simple') AS p)"}) {
    const ProcessResult result = sql(db, statement);
    EXPECT_EQ(result.exit_code, 1) << statement;
    EXPECT_NE(result.err.find("not authorized to use function"), std::string::npos) << statement << ": " << result.err;
    EXPECT_EQ(result.out, "") << statement;
  }
}

// As sqlite3 reads SQL: a statement piped in, with no argument or with "-".
TEST(Trace2ctlSql, ReadsTheStatementFromStandardInput) {
  SampleDatabase db;
  const std::string statement = "SELECT sid FROM sessions\n  WHERE cmd_name = 'status'\n  ORDER BY id;\n";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"sql"}, std::vector<std::string>{"sql", "-"}}) {
    ProcessSpec spec;
    spec.argv = {TRACE2CTL_BIN, "--db", db.path(), "--format", "tsv"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.stdin_data = statement;
    const ProcessResult r = run_process(spec);
    EXPECT_EQ(r.exit_code, 0) << args.size() << ": " << r.err;
    EXPECT_EQ(r.out, "sid\nsid-old\nsid-recent\n") << args.size();
  }
  ProcessSpec two;
  two.argv = {TRACE2CTL_BIN, "--db", db.path(), "sql", "-"};
  two.stdin_data = "SELECT 1; SELECT 2;";
  const ProcessResult refused = run_process(two);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("only one SQL statement"), std::string::npos) << refused.err;
  ProcessSpec empty;
  empty.argv = {TRACE2CTL_BIN, "--db", db.path(), "sql"};
  const ProcessResult none = run_process(empty);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no SQL statement given"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace trace2d::test
