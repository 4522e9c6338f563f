// data_json's check and compaction.

#include <gtest/gtest.h>

#include "client/src/json_check.hpp"

namespace trace2d::client::detail {
namespace {

TEST(ClientJsonCheck, AcceptsJsonValues) {
  for (const std::string_view ok : {"0", "-1.5e+3", "true", "null", "\"x\\u00e9\\n\"", "[]", "{}",
                                    " {\"a\": [1, {\"b\": null}], \"c\": \"\xff\"} ", "[1,2,3]"}) {
    EXPECT_TRUE(is_json_value(ok)) << ok;
  }
}

TEST(ClientJsonCheck, RejectsAnythingElse) {
  for (const std::string_view bad :
       {"", "{", "[1,]", "{a:1}", "01", "1.", "\"\n\"", "\"\\x\"", "tru", "1 2", "{\"a\" 1}", "[1}",
        "\"unterminated", "{\"a\":1,}", "--1", "\"\\u12g4\""}) {
    EXPECT_FALSE(is_json_value(bad)) << bad;
  }
  EXPECT_FALSE(is_json_value(std::string(100, '[') + std::string(100, ']')));
  EXPECT_TRUE(is_json_value(std::string(20, '[') + std::string(20, ']')));
}

TEST(ClientJsonCheck, CompactsOutsideStringsOnly) {
  std::string out;
  append_compact_json(out, " {\n \"a b\" : [ 1 , \"x \\\" y\" ],\t\"c\":{ } } ");
  EXPECT_EQ(out, "{\"a b\":[1,\"x \\\" y\"],\"c\":{}}");
}

}  // namespace
}  // namespace trace2d::client::detail
