// trace2ctl stats and top: the schema's statistics views over a window.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "db/sqlite.hpp"
#include "tests/ctl/imported_traces.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

simdjson::dom::array parse_array(simdjson::dom::parser& parser, const std::string& text) {
  simdjson::dom::array array;
  EXPECT_EQ(parser.parse(text).get(array), simdjson::SUCCESS) << text;
  return array;
}

double number(simdjson::dom::element element) {
  double value = 0;
  if (element.get(value) == simdjson::SUCCESS) {
    return value;
  }
  return static_cast<double>(element.get_int64().value());
}

// The JSON rows must equal the view's rows, column by column.
void expect_equals_view(const std::string& json, const std::string& view_sql) {
  simdjson::dom::parser parser;
  simdjson::dom::array rows = parse_array(parser, json);
  db::Database db(imported_traces_db(), db::OpenMode::read_only);
  db::Statement view = db.prepare(view_sql);
  std::size_t index = 0;
  while (view.step()) {
    ASSERT_LT(index, rows.size());
    simdjson::dom::object row = rows.at(index++).get_object().value();
    for (int c = 0; c < view.column_count(); ++c) {
      const std::string column(view.column_name(c));
      simdjson::dom::element value = row[column].value();
      if (view.column_is_null(c)) {
        EXPECT_TRUE(value.is_null()) << column;
      } else if (view.column_type(c) == SQLITE_TEXT) {
        EXPECT_EQ(std::string_view(value.get_string().value()), view.column_text(c)) << column;
      } else {
        EXPECT_DOUBLE_EQ(number(value), view.column_double(c)) << column << " of row " << index;
      }
    }
  }
  EXPECT_EQ(index, rows.size());
}

// With --all (every process) and the commands git names itself (not
// `_run_dashed_` and the like, which stats shows by the name typed), the
// same numbers as the view.
TEST(Trace2ctlStats, JsonEqualsTheCommandStatsView) {
  std::string names;
  {
    db::Database db(imported_traces_db(), db::OpenMode::read_only);
    db::Statement stmt = db.prepare("SELECT cmd_name FROM command_stats WHERE substr(cmd_name, 1, 1) != '_'");
    while (stmt.step()) {
      names += (names.empty() ? "" : ",") + std::string(stmt.column_text(0));
    }
  }
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "--json", "stats", "--all", "--cmd", names});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expect_equals_view(result.out,
                     "SELECT cmd_name AS command, runs, failures, incomplete, p50_elapsed, p90_elapsed, p99_elapsed,"
                     " max_elapsed, total_elapsed FROM command_stats WHERE substr(cmd_name, 1, 1) != '_'"
                     " ORDER BY runs DESC, cmd_name");
}

TEST(Trace2ctlStats, RegionsJsonEqualsTheRegionStatsView) {
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "--json", "stats", "--by", "regions"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expect_equals_view(result.out, "SELECT * FROM region_stats ORDER BY total_elapsed DESC, category, label");
}

TEST(Trace2ctlStats, TableShowsMilliseconds) {
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "stats", "--all"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = split_lines(result.out);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "command         runs  failures  incomplete  p50_elapsed_ms  p90_elapsed_ms  p99_elapsed_ms"
            "  max_elapsed_ms  total_elapsed_ms");
  // rev-parse ran 4 times in the traces, one of them failed (exit 128).
  bool rev_parse_seen = false;
  bool fetch_seen = false;
  for (const std::string& line : lines) {
    if (line.rfind("rev-parse ", 0) == 0) {
      rev_parse_seen = true;
      EXPECT_EQ(line.rfind("rev-parse          4         1           0", 0), 0u) << line;
    }
    if (line.rfind("fetch ", 0) == 0) {
      fetch_seen = true;
      // One number of decimals per column: rev-parse's need three.
      EXPECT_EQ(line, "fetch              1         0           0          28.000          28.000          28.000"
                      "          28.000            28.000");
    }
  }
  EXPECT_TRUE(rev_parse_seen) << result.out;
  EXPECT_TRUE(fetch_seen) << result.out;
}

TEST(Trace2ctlStats, SinceAndCmdNarrowTheWindow) {
  SampleDatabase db;  // status 10 d ago (ok) and 1 h ago (exit 1), commit 5 min ago
  simdjson::dom::parser parser;
  const ProcessResult day = run_ctl({"--db", db.path(), "--json", "stats", "--since", "-1d"});
  ASSERT_EQ(day.exit_code, 0) << day.err;
  simdjson::dom::array rows = parse_array(parser, day.out);
  ASSERT_EQ(rows.size(), 2u) << day.out;
  EXPECT_EQ(std::string_view(rows.at(0)["command"].get_string().value()), "commit");
  EXPECT_EQ(std::string_view(rows.at(1)["command"].get_string().value()), "status");
  EXPECT_EQ(rows.at(1)["runs"].get_int64().value(), 1);
  EXPECT_EQ(rows.at(1)["failures"].get_int64().value(), 1);
  EXPECT_DOUBLE_EQ(rows.at(1)["max_elapsed"].get_double().value(), 0.0125);

  const ProcessResult all = run_ctl({"--db", db.path(), "--json", "stats", "--cmd", "status"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  rows = parse_array(parser, all.out);
  ASSERT_EQ(rows.size(), 1u) << all.out;
  EXPECT_EQ(rows.at(0)["runs"].get_int64().value(), 2);
  EXPECT_DOUBLE_EQ(rows.at(0)["p50_elapsed"].get_double().value(), 0.0125);
  EXPECT_DOUBLE_EQ(rows.at(0)["p90_elapsed"].get_double().value(), 0.25);

  const ProcessResult none = run_ctl({"--db", db.path(), "--json", "stats", "--since", "2099-01-01"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "[]\n");
  EXPECT_EQ(run_ctl({"--db", db.path(), "stats", "--since", "soon"}).exit_code, 2);
}

TEST(Trace2ctlTop, SlowestCommandsFirst) {
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "--json", "top", "--all", "--limit", "3"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::array rows = parse_array(parser, result.out);
  ASSERT_EQ(rows.size(), 3u);
  // The clone, its upload-pack, its index-pack.
  EXPECT_EQ(std::string_view(rows.at(0)["sid"].get_string().value()), k_clone_sid);
  EXPECT_DOUBLE_EQ(rows.at(0)["elapsed"].get_double().value(), 0.297205);
  EXPECT_EQ(std::string_view(rows.at(1)["cmd_name"].get_string().value()), "upload-pack");
  EXPECT_EQ(std::string_view(rows.at(2)["cmd_name"].get_string().value()), "index-pack");
  EXPECT_GE(rows.at(1)["elapsed"].get_double().value(), rows.at(2)["elapsed"].get_double().value());
  // argv is an array, as in sessions, show and tree.
  simdjson::dom::array argv = rows.at(0)["argv"].get_array().value();
  EXPECT_EQ(std::string_view(argv.at(1).get_string().value()), "clone");

  const ProcessResult fetch = run_ctl({"--db", imported_traces_db(), "--utc", "top", "--cmd", "fetch"});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
  const auto lines = split_lines(fetch.out);
  ASSERT_EQ(lines.size(), 3u) << fetch.out;
  EXPECT_EQ(lines[0].rfind("elapsed_ms  command  exit_code  status    start_time  ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[2].rfind("      28.0  fetch            0  complete  2026-11-22 00:04:29.651 UTC", 0), 0u) << lines[2];
  // The table: a short SID and the command line.
  EXPECT_NE(lines[2].find("  20261122T000429.651  git fetch --no-auto-gc origin"), std::string::npos) << lines[2];
}

TEST(Trace2ctlTop, SlowestRegionsWithTheirSession) {
  const ProcessResult result =
      run_ctl({"--db", imported_traces_db(), "--json", "top", "--by", "regions", "--limit", "2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::array rows = parse_array(parser, result.out);
  ASSERT_EQ(rows.size(), 2u);
  simdjson::dom::object first = rows.at(0).get_object().value();
  EXPECT_EQ(std::string_view(first["category"].get_string().value()), "pack-objects");
  EXPECT_EQ(std::string_view(first["label"].get_string().value()), "write-pack-file");
  EXPECT_DOUBLE_EQ(first["elapsed"].get_double().value(), 0.180079);
  EXPECT_EQ(std::string_view(first["cmd_name"].get_string().value()), "pack-objects");
  EXPECT_EQ(std::string_view(first["thread"].get_string().value()), "main");
  EXPECT_EQ(std::string(first["sid"].get_string().value()).rfind(k_clone_sid, 0), 0u);
  EXPECT_GE(first["elapsed"].get_double().value(), rows.at(1)["elapsed"].get_double().value());
}

}  // namespace
}  // namespace trace2d::test
