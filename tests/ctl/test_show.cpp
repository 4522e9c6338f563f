// trace2ctl show SID: the session record and its events.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <string>

#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

bool has_line(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(Trace2ctlShow, PrintsTheSessionRecordThenItsEvents) {
  SampleDatabase db;
  const ProcessResult result = run_ctl({"--db", db.path(), "--utc", "show", "sid-recent"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  const auto lines = split_lines(result.out);

  EXPECT_EQ(lines.at(0), "sid: sid-recent");
  EXPECT_TRUE(has_line(lines, "id: 3")) << result.out;
  EXPECT_TRUE(has_line(lines, "cmd_name: status")) << result.out;
  EXPECT_TRUE(has_line(lines, "status: complete")) << result.out;
  EXPECT_TRUE(has_line(lines, "exit_code: 1")) << result.out;
  EXPECT_TRUE(has_line(lines, "elapsed_ms: 12.5")) << "milliseconds, as in every table\n" << result.out;
  EXPECT_TRUE(has_line(lines, "argv: git status")) << "a command line, as in every table\n" << result.out;
  // Times as tables show them (--utc: in UTC, named so).
  EXPECT_TRUE(has_line(lines, "start_time: " + SampleDatabase::shown_utc(db.time_ago(k_hour_us)))) << result.out;
  EXPECT_TRUE(has_line(lines, "parent_sid:")) << "NULL prints as nothing\n" << result.out;

  // The record, a blank line, then the events table: header, rule, 5 events.
  const auto blank = std::find(lines.begin(), lines.end(), "");
  ASSERT_NE(blank, lines.end()) << result.out;
  EXPECT_EQ(blank - lines.begin(),
            db.writer().query_int("SELECT count(*) FROM pragma_table_info('sessions')").value_or(-1) + 5)
      << "one line per sessions column, and the owner, command, top_level, repository and reason";
  EXPECT_TRUE(has_line(lines, "command: status")) << result.out;
  EXPECT_TRUE(has_line(lines, "top_level: 1")) << result.out;
  EXPECT_TRUE(has_line(lines, "reason: exit code 1, no error message")) << result.out;
  EXPECT_TRUE(has_line(lines, "owner: -")) << "no uid known\n" << result.out;
  const std::vector<std::string> table(blank + 1, lines.end());
  ASSERT_EQ(table.size(), 7u) << result.out;
  EXPECT_EQ(table[0].rfind("seq  event ", 0), 0u) << table[0];
  for (const char* column : {"thread", "time", "label", "value"}) {
    EXPECT_NE(table[0].find(column), std::string::npos) << column;
  }
  EXPECT_EQ(table[2].rfind("  0  version  main  ", 0), 0u) << table[2];
  EXPECT_NE(table[2].find(SampleDatabase::shown_utc(db.time_ago(k_hour_us))), std::string::npos) << table[2];
  EXPECT_NE(table[2].find("2.43.0"), std::string::npos) << table[2];
  EXPECT_NE(table[3].find(R"(["git","status"])"), std::string::npos) << table[3];
  EXPECT_NE(table[5].find("exit"), std::string::npos) << table[5];
  EXPECT_NE(table[6].find("printf"), std::string::npos) << table[6];
  EXPECT_NE(table[6].find("hello"), std::string::npos) << table[6];
}

TEST(Trace2ctlShow, LongValuesAreWholeWhenPipedAndControlCharactersEscaped) {
  SampleDatabase db;
  const ProcessResult result = run_ctl({"--db", db.path(), "show", "sid-recent"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = split_lines(result.out);
  const auto data = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.find(" data ") != std::string::npos;
  });
  ASSERT_NE(data, lines.end()) << result.out;
  // The newline inside the value did not break the row...
  const std::size_t value_at = data->find(R"(first line\nsecond line xxx)");
  ASSERT_NE(value_at, std::string::npos) << *data;
  EXPECT_NE(data->find(" note "), std::string::npos) << "label: the data key\n" << *data;
  // ...and, standard output not being a terminal, the value is whole (on a
  // terminal it is cut to its width: tests/e2e/test_ctl_habits.cpp).
  const std::string value = data->substr(value_at);
  EXPECT_TRUE(value.ends_with(" end")) << value;
  EXPECT_EQ(value.find("..."), std::string::npos) << value;
}

TEST(Trace2ctlShow, UnknownSidFails) {
  SampleDatabase db;
  const ProcessResult result = run_ctl({"--db", db.path(), "show", "sid-missing"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("no session with sid 'sid-missing'"), std::string::npos) << result.err;
}

TEST(Trace2ctlShow, MissingSidIsAUsageError) {
  SampleDatabase db;
  const ProcessResult result = run_ctl({"--db", db.path(), "show"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("sid"), std::string::npos) << result.err;
}

TEST(Trace2ctlShow, JsonHoldsTheWholeSessionAndUncutEvents) {
  SampleDatabase db;
  const ProcessResult result = run_ctl({"--db", db.path(), "--json", "show", "sid-recent"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::object doc;
  ASSERT_EQ(parser.parse(result.out).get(doc), simdjson::SUCCESS) << result.out;
  EXPECT_EQ(doc.size(), 2u);

  simdjson::dom::object session = doc["session"].get_object().value();
  // Every column of `sessions`, whatever the schema version adds, and the
  // owner, command, top_level, repository and reason.
  EXPECT_EQ(static_cast<std::int64_t>(session.size()),
            db.writer().query_int("SELECT count(*) FROM pragma_table_info('sessions')").value_or(-1) + 5);
  EXPECT_TRUE(session["owner"].is_null());
  EXPECT_EQ(std::string_view(session["sid"].get_string().value()), "sid-recent");
  EXPECT_EQ(session["id"].get_int64().value(), 3);
  EXPECT_EQ(session["exit_code"].get_int64().value(), 1);
  EXPECT_DOUBLE_EQ(session["elapsed"].get_double().value(), 0.0125);
  EXPECT_TRUE(session["parent_sid"].is_null());
  // An array, as in every command's JSON.
  simdjson::dom::array argv = session["argv"].get_array().value();
  ASSERT_EQ(argv.size(), 2u);
  EXPECT_EQ(std::string_view(argv.at(0).get_string().value()), "git");

  simdjson::dom::array events = doc["events"].get_array().value();
  ASSERT_EQ(events.size(), 5u);
  std::int64_t expected_seq = 0;
  for (simdjson::dom::element event : events) {
    EXPECT_EQ(event["seq"].get_int64().value(), expected_seq++);
    // seq, event, thread, time, nesting, category, label, elapsed (a
    // region's; issue 26), value.
    EXPECT_EQ(event.get_object().value().size(), 9u);
  }
  simdjson::dom::object data = events.at(2).get_object().value();
  EXPECT_EQ(std::string_view(data["event"].get_string().value()), "data");
  EXPECT_EQ(std::string_view(data["thread"].get_string().value()), "main");
  EXPECT_EQ(std::string_view(data["label"].get_string().value()), "note");
  EXPECT_EQ(std::string_view(data["value"].get_string().value()), SampleDatabase::k_long_value);
  simdjson::dom::object exit_event = events.at(3).get_object().value();
  EXPECT_EQ(exit_event["value"].get_int64().value(), 1);
}

}  // namespace
}  // namespace trace2d::test
