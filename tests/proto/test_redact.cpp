#include "proto/redact.hpp"

#include <gtest/gtest.h>

namespace trace2d::proto {
namespace {

std::string redact(std::string_view line) {
  std::string out;
  return redact_url_credentials(line, out) ? out : std::string(line);
}

TEST(Redact, ReplacesThePasswordOfEveryUrl) {
  EXPECT_EQ(redact(R"({"argv":["git","clone","https://alice:s3cret@example.com/r.git"]})"),
            R"({"argv":["git","clone","https://alice:<redacted>@example.com/r.git"]})");
  EXPECT_EQ(redact(R"(["http://a:b@h/x","ssh://u:p@h:22/y"])"), R"(["http://a:<redacted>@h/x","ssh://u:<redacted>@h:22/y"])");
}

TEST(Redact, LeavesUrlsWithoutPasswordsAlone) {
  std::string out = "unchanged";
  for (const char* line : {R"({"argv":["https://example.com/r.git"]})", R"({"v":"https://alice@example.com/r"})",
                           R"({"v":"https://h/path?x=a:b@c"})", R"({"v":"no url: here @ all"})",
                           R"({"v":"https://:@h/"})"}) {
    EXPECT_FALSE(redact_url_credentials(line, out)) << line;
  }
  EXPECT_EQ(out, "unchanged");
}

TEST(Redact, EscapedCharactersInThePasswordAreRedactedToo) {
  // git escapes '"' and '\\' in JSON strings; the password stays one span.
  EXPECT_EQ(redact(R"({"v":"https://u:p\"w\\d@h/r"})"), R"({"v":"https://u:<redacted>@h/r"})");
}

TEST(Redact, StopsAtTheEndOfTheString) {
  // The '@' belongs to another string: not a password.
  EXPECT_EQ(redact(R"({"a":"https://u:p","b":"x@y"})"), R"({"a":"https://u:p","b":"x@y"})");
}

}  // namespace
}  // namespace trace2d::proto
