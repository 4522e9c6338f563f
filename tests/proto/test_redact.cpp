#include "proto/redact.hpp"

#include <gtest/gtest.h>

namespace trace2d::proto {
namespace {

std::string redact(std::string_view line) {
  std::string out;
  return redact_url_credentials(line, out) ? out : std::string(line);
}

// Issue 24, finding 9: a user name cannot be told from a token, so the whole
// userinfo goes (this used to keep "alice" and "a" in front of the password).
TEST(Redact, ReplacesTheUserinfoOfEveryUrl) {
  EXPECT_EQ(redact(R"({"argv":["git","clone","https://alice:s3cret@example.com/r.git"]})"),
            R"({"argv":["git","clone","https://<redacted>@example.com/r.git"]})");
  EXPECT_EQ(redact(R"(["http://a:b@h/x","ssh://u:p@h:22/y"])"), R"(["http://<redacted>@h/x","ssh://<redacted>@h:22/y"])");
}

TEST(Redact, ATokenInTheUserNamePositionIsRedacted) {
  EXPECT_EQ(redact(R"({"argv":["git","clone","http://ghp_TOKEN123@example.com/r.git"]})"),
            R"({"argv":["git","clone","http://<redacted>@example.com/r.git"]})");
  // GitHub's documented form: the token as user, a fixed password.
  EXPECT_EQ(redact(R"({"v":"https://ghp_TOKEN:x-oauth-basic@github.com/o/r"})"),
            R"({"v":"https://<redacted>@github.com/o/r"})");
  // No path at all: the authority ends with the string.
  EXPECT_EQ(redact(R"({"v":"https://ghp_TOKEN@github.com"})"), R"({"v":"https://<redacted>@github.com"})");
}

TEST(Redact, WellKnownUserNamesAreKeptInFrontOfTheirPassword) {
  EXPECT_EQ(redact(R"({"v":"https://oauth2:glpat-SECRET@gitlab.example/r"})"),
            R"({"v":"https://oauth2:<redacted>@gitlab.example/r"})");
  EXPECT_EQ(redact(R"({"v":"https://x-access-token:ghs_SECRET@github.com/o/r"})"),
            R"({"v":"https://x-access-token:<redacted>@github.com/o/r"})");
  std::string out = "unchanged";
  EXPECT_FALSE(redact_url_credentials(R"({"v":"ssh://git@github.com/o/r"})", out));
  EXPECT_EQ(out, "unchanged");
  // Compared exactly: any other spelling may be anything.
  EXPECT_EQ(redact(R"({"v":"https://Git@h/r"})"), R"({"v":"https://<redacted>@h/r"})");
}

TEST(Redact, PasswordsWithAtSpaceQuestionMarkOrHashAreRedactedWhole) {
  // The last '@' before the host ends the userinfo: "p@ss" leaked "ss".
  EXPECT_EQ(redact(R"({"v":"https://u:p@ss@h/r"})"), R"({"v":"https://<redacted>@h/r"})");
  EXPECT_EQ(redact(R"({"v":"https://u:pa ss@h/r"})"), R"({"v":"https://<redacted>@h/r"})");
  EXPECT_EQ(redact(R"({"v":"https://u:pa?ss@h/r"})"), R"({"v":"https://<redacted>@h/r"})");
  EXPECT_EQ(redact(R"({"v":"https://u:pa#ss@h/r"})"), R"({"v":"https://<redacted>@h/r"})");
  EXPECT_EQ(redact(R"({"v":"https://oauth2:a b?c#d@e@h/r"})"), R"({"v":"https://oauth2:<redacted>@h/r"})");
  // Percent-encoding is text of the userinfo like any other.
  EXPECT_EQ(redact(R"({"v":"https://u%40x:p%2Fw%3A@h/r"})"), R"({"v":"https://<redacted>@h/r"})");
}

TEST(Redact, JsonEscapesInsideTheUrlAreReadAsTheCharactersTheyStandFor) {
  // git escapes '"' and '\\'; other writers may escape '/' and anything.
  EXPECT_EQ(redact(R"({"v":"https://u:p\"w\\d@h/r"})"), R"({"v":"https://<redacted>@h/r"})");
  EXPECT_EQ(redact(R"({"v":"https:\/\/tok@h\/r"})"), R"({"v":"https:\/\/<redacted>@h\/r"})");
  EXPECT_EQ(redact(R"({"v":"https:\u002F\/tok@h"})"), R"({"v":"https:\u002F\/<redacted>@h"})");
  EXPECT_EQ(redact(R"({"v":"https://tok\u0040h/r"})"), R"({"v":"https://<redacted>\u0040h/r"})");
  EXPECT_EQ(redact(R"({"v":"https://tok@h\/p@q"})"), R"({"v":"https://<redacted>@h\/p@q"})")
      << "an escaped slash ends the authority";
  EXPECT_EQ(redact(R"({"v":"https://tok@h\u002Fp@q"})"), R"({"v":"https://<redacted>@h\u002Fp@q"})");
  EXPECT_EQ(redact(R"({"v":"https://oauth2\u003aSECRET@h/"})"), R"({"v":"https://oauth2\u003a<redacted>@h/"})");
}

TEST(Redact, UrlsInsideLongerStrings) {
  EXPECT_EQ(redact(R"({"argv":["git","-c","remote.origin.url=https://tok@h/r","fetch"]})"),
            R"({"argv":["git","-c","remote.origin.url=https://<redacted>@h/r","fetch"]})");
  EXPECT_EQ(redact(R"({"param":"url.https://tok@github.com/.insteadof","value":"gh:"})"),
            R"({"param":"url.https://<redacted>@github.com/.insteadof","value":"gh:"})");
  EXPECT_EQ(redact(R"({"msg":"fatal: 'https://a:b@h1/x' and 'http://c@h2/y' failed"})"),
            R"({"msg":"fatal: 'https://<redacted>@h1/x' and 'http://<redacted>@h2/y' failed"})");
}

TEST(Redact, LeavesUrlsWithoutUserinfoAlone) {
  std::string out = "unchanged";
  for (const char* line : {R"({"argv":["https://example.com/r.git"]})", R"({"v":"https://h/path?x=a:b@c"})",
                           R"({"v":"no url: here @ all"})", R"({"v":"https://:@h/"})", R"({"v":"https://@h/"})",
                           R"({"v":"https://h:443/a@b"})", R"({"v":"git@github.com:o/r.git"})"}) {
    EXPECT_FALSE(redact_url_credentials(line, out)) << line;
  }
  EXPECT_EQ(out, "unchanged");
}

TEST(Redact, StopsAtTheEndOfTheString) {
  // The '@' belongs to another string: not a password.
  EXPECT_EQ(redact(R"({"a":"https://u:p","b":"x@y"})"), R"({"a":"https://u:p","b":"x@y"})");
}

TEST(Redact, IsIdempotent) {
  for (const char* line : {R"({"v":"https://u:p@ss@h/r"})", R"({"v":"https://oauth2:s@h/"})",
                           R"({"v":"https://a@b https://c@d/"})", R"({"v":"https://t\u0040h/"})"}) {
    const std::string once = redact(line);
    std::string twice;
    EXPECT_FALSE(redact_url_credentials(once, twice)) << once;
  }
}

TEST(Redact, ReusesTheOutputBuffer) {
  std::string out;
  out.reserve(256);
  const char* before = out.data();
  ASSERT_TRUE(redact_url_credentials(R"({"v":"https://tok@h/"})", out));
  ASSERT_TRUE(redact_url_credentials(R"({"v":"https://other@h/"})", out));
  EXPECT_EQ(out, R"({"v":"https://<redacted>@h/"})");
  EXPECT_EQ(out.data(), before) << "no new allocation once the buffer is large enough";
}

}  // namespace
}  // namespace trace2d::proto
