// The output module on its own: cell text, escaping, cutting, alignment, JSON.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <limits>
#include <sstream>

#include "ctl/output/delimited.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/table.hpp"

namespace trace2d::ctl {
namespace {

TEST(Trace2ctlOutput, CellTextPerStorageClass) {
  EXPECT_EQ(cell_text(Null{}), "");
  EXPECT_EQ(cell_text(std::int64_t{-42}), "-42");
  EXPECT_EQ(cell_text(0.1), "0.1");
  EXPECT_EQ(cell_text(3.0), "3.0") << "a REAL never looks like an INTEGER";
  EXPECT_EQ(cell_text(1e300), "1e+300");
  EXPECT_EQ(cell_text(std::string("plain")), "plain");
  EXPECT_EQ(cell_text(Blob{std::string("\x00\xab\x10", 3)}), "x'00ab10'");
}

TEST(Trace2ctlOutput, EscapesControlCharactersAndRepairsUtf8) {
  EXPECT_EQ(escape_for_terminal("a\nb\tc\rd"), R"(a\nb\tc\rd)");
  EXPECT_EQ(escape_for_terminal(std::string("\x1b[31m\x7f", 6)), R"(\x1b[31m\x7f)");
  EXPECT_EQ(escape_for_terminal("back\\slash é"), "back\\slash é");
  EXPECT_EQ(escape_for_terminal("bad \xff!"), "bad \xEF\xBF\xBD!");
}

// Issue 10: U+009B (CSI, C2 9B in UTF-8) and the other C1 controls reached
// the terminal raw; a lone 9B byte (not UTF-8) must not either.
TEST(Trace2ctlOutput, EscapesC1ControlsAndStrayHighBytes) {
  EXPECT_EQ(escape_for_terminal("a\xc2\x9b" "31mred"), R"(a\u009b31mred)");
  EXPECT_EQ(escape_for_terminal("\xc2\x80\xc2\x85\xc2\x9f"), R"(\u0080\u0085\u009f)");
  // U+00A0 and U+00E9 are printable: kept.
  EXPECT_EQ(escape_for_terminal("\xc2\xa0\xc3\xa9"), "\xc2\xa0\xc3\xa9");
  // Bytes >= 0x80 that are not UTF-8 become U+FFFD, never raw.
  EXPECT_EQ(escape_for_terminal("x\x9b[2J\xc2"), "x\xEF\xBF\xBD[2J\xEF\xBF\xBD");
}

TEST(Trace2ctlOutput, WidthAndTruncationCountCharactersNotBytes) {
  EXPECT_EQ(display_width("héllo"), 5u);
  EXPECT_EQ(truncate_text("short", 10), "short");
  EXPECT_EQ(truncate_text("0123456789", 10), "0123456789");
  EXPECT_EQ(truncate_text("0123456789a", 10), "0123456...");
  // Never cuts inside a character.
  EXPECT_EQ(truncate_text("ééééééé", 6), "ééé...");
}

TEST(Trace2ctlOutput, TableAlignsByCharactersAndRightAlignsNumbers) {
  ResultSet result;
  result.columns = {"name", "n", "note"};
  result.rows.push_back({std::string("héllo"), std::int64_t{1}, Null{}});
  result.rows.push_back({std::string("x"), std::int64_t{250}, std::string("long note")});
  std::ostringstream out;
  print_table(out, result, TableStyle{{{"note", 6}}});
  EXPECT_EQ(out.str(),
            "name     n  note\n"
            "-----  ---  ------\n"
            "héllo    1\n"
            "x      250  lon...\n");
}

TEST(Trace2ctlOutput, RecordPrintsNameValueLines) {
  std::ostringstream out;
  print_record(out, {"a", "b", "c"}, {std::int64_t{1}, Null{}, std::string("two\nlines")});
  EXPECT_EQ(out.str(), "a: 1\nb:\nc: two\\nlines\n");
}

TEST(Trace2ctlOutput, JsonIsValidForAnyText) {
  ResultSet result;
  result.columns = {"text", "blob", "real", "inf", "quote\"key"};
  result.rows.push_back({std::string("ctl \x01 \"q\" \\ \xc3\x28 \n"), Blob{"\x01\xff"}, 2.5,
                         std::numeric_limits<double>::infinity(),
                         std::int64_t{7}});
  std::string text;
  append_json_array(text, result);
  simdjson::dom::parser parser;
  simdjson::dom::array rows;
  ASSERT_EQ(parser.parse(text).get(rows), simdjson::SUCCESS) << text;
  simdjson::dom::object row = rows.at(0).get_object().value();
  EXPECT_EQ(std::string_view(row["text"].get_string().value()),
            "ctl \x01 \"q\" \\ \xEF\xBF\xBD( \n");
  EXPECT_EQ(std::string_view(row["blob"].get_string().value()), "01ff");
  EXPECT_DOUBLE_EQ(row["real"].get_double().value(), 2.5);
  EXPECT_TRUE(row["inf"].is_null()) << "JSON has no infinity";
  EXPECT_EQ(row["quote\"key"].get_int64().value(), 7);
}

TEST(Trace2ctlOutput, EmptyJsonArray) {
  ResultSet result;
  result.columns = {"a"};
  std::ostringstream out;
  print_json_array(out, result);
  EXPECT_EQ(out.str(), "[]\n");
}

TEST(Trace2ctlOutput, CsvQuotesWhatNeedsItAndTsvEscapes) {
  ResultSet result;
  result.columns = {"text", "n", "x", "nothing", "bytes", "argv"};
  result.rows.push_back({std::string("a,b \"c\"\nd"), std::int64_t{7}, 0.5, Null{}, Blob{"\x01\xff"},
                         std::string(R"(["git","-c","a=b\tc"])")});
  result.rows.push_back({std::string("plain"), std::int64_t{-1}, 2.0, Null{}, Blob{""}, std::string("tab\there\\")});
  std::ostringstream csv;
  print_delimited(csv, result, Delimiter::csv);
  EXPECT_EQ(csv.str(),
            "text,n,x,nothing,bytes,argv\n"
            "\"a,b \"\"c\"\"\nd\",7,0.5,,01ff,\"[\"\"git\"\",\"\"-c\"\",\"\"a=b\\tc\"\"]\"\n"
            "plain,-1,2.0,,,tab\there\\\n");
  std::ostringstream tsv;
  print_delimited(tsv, result, Delimiter::tsv, Header::omit);
  EXPECT_EQ(tsv.str(),
            "a,b \"c\"\\nd\t7\t0.5\t\t01ff\t[\"git\",\"-c\",\"a=b\\\\tc\"]\n"
            "plain\t-1\t2.0\t\t\ttab\\there\\\\\n");
}

}  // namespace
}  // namespace trace2d::ctl
