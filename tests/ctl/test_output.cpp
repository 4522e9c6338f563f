// The output module on its own: cell text, escaping, cutting, alignment, JSON.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>
#include <sstream>

#include "ctl/output/delimited.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/display.hpp"
#include "ctl/output/table.hpp"
#include "ctl/output/unsafe_text.hpp"
#include "ctl/render/html_text.hpp"

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
  // Not a terminal: nothing is cut (`trace2ctl sessions | grep` sees all).
  std::ostringstream piped;
  print_table(piped, result, TableStyle{{{"note", 6}}});
  EXPECT_EQ(piped.str(),
            "name     n  note\n"
            "-----  ---  ---------\n"
            "héllo    1\n"
            "x      250  long note\n");
  // A terminal 16 columns wide: the cuttable column gives what it can,
  // down to its minimum.
  set_display({false, 16, false});
  std::ostringstream out;
  print_table(out, result, TableStyle{{{"note", 6}}});
  // --no-trunc on the same terminal: whole.
  set_display({false, 16, true});
  std::ostringstream whole;
  print_table(whole, result, TableStyle{{{"note", 6}}});
  set_display({});
  EXPECT_EQ(out.str(),
            "name     n  note\n"
            "-----  ---  ------\n"
            "héllo    1\n"
            "x      250  lon...\n");
  EXPECT_EQ(whole.str(), piped.str());
}

TEST(Trace2ctlOutput, FittingCutsTheWidestCuttableColumnFirst) {
  // 10 + 2 + 40 + 2 + 30 = 84 in 66: the 40 gives until it is as wide as
  // the 30, then both give alike; the uncuttable one never.
  EXPECT_EQ(fit_widths({10, 40, 30}, {0, 24, 24}, 66), (std::vector<std::size_t>{10, 26, 26}));
  EXPECT_EQ(fit_widths({10, 40, 30}, {0, 24, 24}, 200), (std::vector<std::size_t>{10, 40, 30}));
  EXPECT_EQ(fit_widths({10, 40, 30}, {0, 24, 24}, 10), (std::vector<std::size_t>{10, 24, 24})) << "never below";
}

TEST(Trace2ctlOutput, RealsOfAColumnShareTheirDecimals) {
  ResultSet result;
  result.columns = {"elapsed_ms", "ratio"};
  result.rows.push_back({6.32, 0.5});
  result.rows.push_back({11.453, 2.0});
  result.rows.push_back({28.0, Null{}});
  std::ostringstream out;
  print_table(out, result);
  EXPECT_EQ(out.str(),
            "elapsed_ms  ratio\n"
            "----------  -----\n"
            "     6.320    0.5\n"
            "    11.453    2.0\n"
            "    28.000\n");
}

TEST(Trace2ctlOutput, TimesAreLocalWithTheirZoneOrUtc) {
  const char* old = std::getenv("TZ");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TZ", "America/New_York", 1);
  ::tzset();
  EXPECT_EQ(display_time("2026-11-27T10:35:22.123456Z"), "2026-11-27 05:35:22.123 EST");
  EXPECT_EQ(display_time("2026-07-01T10:35:22.000000Z"), "2026-07-01 06:35:22.000 EDT");
  EXPECT_EQ(display_time("not a time"), "not a time");
  EXPECT_EQ(display_time("2026-11-27T10:35:22+01:00"), "2026-11-27T10:35:22+01:00") << "only the stored shape";
  set_display({true, std::nullopt, false});
  EXPECT_EQ(display_time("2026-11-27T10:35:22.123456Z"), "2026-11-27 10:35:22.123 UTC");
  set_display({});
  if (old != nullptr) {
    ::setenv("TZ", saved.c_str(), 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
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

// Issue 24, finding 9: bidi overrides and isolates, separators, zero-width
// and other invisible characters, as UTF-8, with the text each output
// writes for them.
struct UnsafeSample {
  const char* utf8;
  const char* escaped;  // as tables, CSV, TSV and HTML show it
  const char* json;     // as a JSON escape
};
constexpr UnsafeSample k_unsafe_samples[] = {
    {"\xe2\x80\xae", "\\u202e", "\\u202e"},  // RLO
    {"\xe2\x80\xaa", "\\u202a", "\\u202a"},  // LRE
    {"\xe2\x80\xab", "\\u202b", "\\u202b"},  // RLE
    {"\xe2\x80\xac", "\\u202c", "\\u202c"},  // PDF
    {"\xe2\x80\xad", "\\u202d", "\\u202d"},  // LRO
    {"\xe2\x80\xa8", "\\u2028", "\\u2028"},  // line separator
    {"\xe2\x80\xa9", "\\u2029", "\\u2029"},  // paragraph separator
    {"\xe2\x80\x8b", "\\u200b", "\\u200b"},  // zero-width space
    {"\xe2\x80\x8e", "\\u200e", "\\u200e"},  // LRM
    {"\xe2\x80\x8f", "\\u200f", "\\u200f"},  // RLM
    {"\xe2\x81\xa6", "\\u2066", "\\u2066"},  // LRI
    {"\xe2\x81\xa7", "\\u2067", "\\u2067"},  // RLI
    {"\xe2\x81\xa8", "\\u2068", "\\u2068"},  // FSI
    {"\xe2\x81\xa9", "\\u2069", "\\u2069"},  // PDI
    {"\xd8\x9c", "\\u061c", "\\u061c"},      // Arabic letter mark
    {"\xef\xbb\xbf", "\\ufeff", "\\ufeff"},  // BOM
    {"\xc2\x9b", "\\u009b", "\\u009b"},      // CSI (C1)
    {"\xc2\xad", "\\u00ad", "\\u00ad"},      // soft hyphen
    {"\xf3\xa0\x81\x81", "\\U000e0041", "\\udb40\\udc41"},  // TAG LATIN CAPITAL LETTER A
};

TEST(Trace2ctlOutput, UnsafeCharactersAreControlsSeparatorsBidiAndInvisibleFormats) {
  for (const char32_t c : {U'\0', U'\x1b', U'\x7f', U'\x80', U'\x9b', U'\x9f', U'\u00ad', U'\u061c', U'\u200b',
                           U'\u200d', U'\u200e', U'\u2028', U'\u2029', U'\u202e', U'\u2060', U'\u2066', U'\u2069',
                           U'\u3164', U'\ufeff', U'\ufff9', U'\U000e0001', U'\U000e007f'}) {
    EXPECT_TRUE(is_unsafe_code_point(c)) << std::hex << static_cast<std::uint32_t>(c);
  }
  for (const char32_t c : {U' ', U'a', U'~', U'\u00a0', U'\u00e9', U'\u05d0', U'\u0627', U'\u2010', U'\u2030',
                           U'\u3000', U'\ufe0f', U'\ufffd', U'\U0001f600', U'\U000e0100'}) {
    EXPECT_FALSE(is_unsafe_code_point(c)) << std::hex << static_cast<std::uint32_t>(c);
  }
}

TEST(Trace2ctlOutput, EscapesBidiAndInvisibleCharactersInEveryFormat) {
  for (const UnsafeSample& sample : k_unsafe_samples) {
    SCOPED_TRACE(sample.escaped);
    const std::string text = std::string("a") + sample.utf8 + "b";
    EXPECT_EQ(escape_for_terminal(text), std::string("a") + sample.escaped + "b");
    EXPECT_EQ(render::html_escaped(text), std::string("a") + sample.escaped + "b");

    std::string json;
    append_json_string(json, text);
    EXPECT_EQ(json, std::string("\"a") + sample.json + "b\"");
    simdjson::dom::parser parser;
    std::string_view decoded;
    ASSERT_EQ(parser.parse(json).get(decoded), simdjson::SUCCESS);
    EXPECT_EQ(decoded, text) << "JSON keeps the data";

    ResultSet result;
    result.columns = {"v"};
    result.rows.push_back({text});
    std::ostringstream csv;
    print_delimited(csv, result, Delimiter::csv, Header::omit);
    EXPECT_EQ(csv.str(), std::string("a") + sample.escaped + "b\n");
    std::ostringstream tsv;
    print_delimited(tsv, result, Delimiter::tsv, Header::omit);
    EXPECT_EQ(tsv.str(), std::string("a") + sample.escaped + "b\n");
    std::ostringstream table;
    print_table(table, result);
    EXPECT_NE(table.str().find(std::string("a") + sample.escaped + "b"), std::string::npos);
  }
}

TEST(Trace2ctlOutput, EmbeddedJsonHasItsUnsafeCharactersEscapedAndStaysValid) {
  ResultSet result;
  result.columns = {"argv"};
  result.json_columns = {"argv"};
  result.rows.push_back({std::string("[\"git\", \"x\xe2\x80\xae\xc2\x9b\"]")});
  std::string text;
  append_json_array(text, result);
  EXPECT_EQ(text, "[\n{\"argv\":[\"git\", \"x\\u202e\\u009b\"]}\n]");
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  ASSERT_EQ(parser.parse(text).get(element), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(element.at(0)["argv"].at(1).get_string().value()), "x\xe2\x80\xae\xc2\x9b");
}

TEST(Trace2ctlOutput, ControlsInCsvTsvAndHtmlAreVisible) {
  ResultSet result;
  result.columns = {"v"};
  result.rows.push_back({std::string("e\x1b[2J\x7f")});
  std::ostringstream csv;
  print_delimited(csv, result, Delimiter::csv, Header::omit);
  EXPECT_EQ(csv.str(), "e\\u001b[2J\\u007f\n");
  std::ostringstream tsv;
  print_delimited(tsv, result, Delimiter::tsv, Header::omit);
  EXPECT_EQ(tsv.str(), "e\\u001b[2J\\u007f\n");
  EXPECT_EQ(render::html_escaped("<e\x1b>\n\t"), "&lt;e\\u001b&gt;\n\t");
}

}  // namespace
}  // namespace trace2d::ctl
