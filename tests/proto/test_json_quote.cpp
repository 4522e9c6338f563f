// JSON string quoting (proto/json_quote.hpp): git's json-writer rules, and
// byte-for-byte agreement with SQLite's json_quote(), which the store relies
// on to rebuild an event's JSON in SQL.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "proto/json_quote.hpp"
#include "proto/parser.hpp"
#include "proto/utf8.hpp"

namespace proto = trace2d::proto;

namespace {

// git's json-writer (append_quoted_string), written out independently.
std::string git_quoted(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\b') {
      out += "\\b";
    } else if (c == '\f') {
      out += "\\f";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      static constexpr char k_hex[] = "0123456789abcdef";
      out += "\\u00";
      out.push_back(k_hex[c >> 4]);
      out.push_back(k_hex[c & 0xF]);
    } else {
      out.push_back(ch);
    }
  }
  out += "\"";
  return out;
}

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StatementFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};

class SqliteQuoter {
 public:
  SqliteQuoter() {
    sqlite3* db = nullptr;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
      sqlite3_close(db);
      throw std::runtime_error("sqlite3_open failed");
    }
    m_db.reset(db);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(m_db.get(), "SELECT json_quote(?1)", -1, &stmt, nullptr) != SQLITE_OK) {
      throw std::runtime_error(sqlite3_errmsg(m_db.get()));
    }
    m_stmt.reset(stmt);
  }

  std::string quote(std::string_view text) {
    sqlite3_reset(m_stmt.get());
    // SQLITE_STATIC/SQLITE_TRANSIENT are old-style casts in SQLite's header:
    // bind a copy that outlives the step, with no destructor (= SQLITE_STATIC).
    m_text.assign(text);
    if (sqlite3_bind_text(m_stmt.get(), 1, m_text.data(), static_cast<int>(m_text.size()),
                          nullptr) != SQLITE_OK) {
      throw std::runtime_error("bind failed");
    }
    if (sqlite3_step(m_stmt.get()) != SQLITE_ROW) {
      throw std::runtime_error(sqlite3_errmsg(m_db.get()));
    }
    const auto* data = sqlite3_column_text(m_stmt.get(), 0);
    const int size = sqlite3_column_bytes(m_stmt.get(), 0);
    std::string out(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size));
    sqlite3_reset(m_stmt.get());
    return out;
  }

 private:
  std::unique_ptr<sqlite3, SqliteCloser> m_db;
  std::unique_ptr<sqlite3_stmt, StatementFinalizer> m_stmt;
  std::string m_text;
};

std::string single_byte(int b) { return std::string(1, static_cast<char>(b)); }

}  // namespace

TEST(JsonQuote, PlainTextIsOnlyWrappedInQuotes) {
  EXPECT_EQ(proto::json_quoted(""), "\"\"");
  EXPECT_EQ(proto::json_quoted("status"), "\"status\"");
  EXPECT_EQ(proto::json_quoted("/usr/bin/git"), "\"/usr/bin/git\"");  // '/' not escaped
  EXPECT_EQ(proto::json_quoted("a'b"), "\"a'b\"");
}

TEST(JsonQuote, EscapesQuoteAndBackslash) {
  EXPECT_EQ(proto::json_quoted("say \"hi\""), R"("say \"hi\"")");
  EXPECT_EQ(proto::json_quoted("C:\\Users\\me"), R"("C:\\Users\\me")");
  EXPECT_EQ(proto::json_quoted("\\\""), R"("\\\"")");
}

TEST(JsonQuote, NamedControlEscapes) {
  EXPECT_EQ(proto::json_quoted("\b\t\n\f\r"), R"("\b\t\n\f\r")");
  EXPECT_EQ(proto::json_quoted("line1\nline2"), R"("line1\nline2")");
}

TEST(JsonQuote, OtherControlBytesAsLowercaseUnicodeEscapes) {
  EXPECT_EQ(proto::json_quoted(std::string_view("\0", 1)), R"("\u0000")");
  EXPECT_EQ(proto::json_quoted("\x01"), R"("\u0001")");
  EXPECT_EQ(proto::json_quoted("\x0b"), R"("\u000b")");
  EXPECT_EQ(proto::json_quoted("\x1b[31m"), R"("\u001b[31m")");
  EXPECT_EQ(proto::json_quoted("\x1f"), R"("\u001f")");
}

TEST(JsonQuote, DelAndHighBytesAreCopiedRaw) {
  EXPECT_EQ(proto::json_quoted("\x7F"), "\"\x7F\"");
  EXPECT_EQ(proto::json_quoted("gr\xC3\xBC\xC3\x9F"), "\"gr\xC3\xBC\xC3\x9F\"");
  EXPECT_EQ(proto::json_quoted("\xFF\x80"), "\"\xFF\x80\"");  // no UTF-8 check, like git
  EXPECT_EQ(proto::json_quoted("\xF0\x9F\x98\x80"), "\"\xF0\x9F\x98\x80\"");
}

TEST(JsonQuote, AppendKeepsThePrefix) {
  std::string out = R"({"msg":)";
  proto::append_json_quoted(out, "a\"b");
  out += "}";
  EXPECT_EQ(out, R"({"msg":"a\"b"})");
}

TEST(JsonQuote, EveryByteFollowsGitsRules) {
  for (int b = 0; b < 256; ++b) {
    const std::string text = single_byte(b);
    EXPECT_EQ(proto::json_quoted(text), git_quoted(text)) << "byte " << b;
    // Embedded in longer text the byte is escaped the same way.
    EXPECT_EQ(proto::json_quoted("a" + text + "z"), git_quoted("a" + text + "z")) << "byte " << b;
  }
}

// Text is scanned eight bytes at a time: every byte at every position of
// a text longer than two words, and a second one right after it, in the
// same word or the next, is escaped as git escapes it.
TEST(JsonQuote, EveryByteAtEveryPositionAcrossWords) {
  for (int b = 0; b < 256; ++b) {
    for (std::size_t at = 0; at < 19; ++at) {
      std::string text(19, 'x');
      text[at] = static_cast<char>(b);
      ASSERT_EQ(proto::json_quoted(text), git_quoted(text)) << "byte " << b << " at " << at;
      for (const std::size_t then : {at + 1, at + 7, at + 8}) {
        if (then < text.size()) {
          std::string two = text;
          two[then] = '"';
          ASSERT_EQ(proto::json_quoted(two), git_quoted(two)) << "byte " << b << " at " << at << ", '\"' at " << then;
        }
      }
    }
  }
}

TEST(JsonQuote, MatchesSqliteForEverySingleByte) {
  SqliteQuoter sqlite;
  for (int b = 0; b < 256; ++b) {
    const std::string text = single_byte(b);
    EXPECT_EQ(proto::json_quoted(text), sqlite.quote(text)) << "byte " << b;
  }
}

TEST(JsonQuote, MatchesSqliteForSamples) {
  SqliteQuoter sqlite;
  const std::vector<std::string> samples = {
      "",
      "git",
      "git status --porcelain=v2",
      R"(C:\Program Files\Git\cmd\git.exe)",
      "tab\there, newline\nthere, cr\r, ff\f, bs\b",
      "quote \" and backslash \\ and both \\\"",
      std::string("embedded\0nul", 12),
      "\x01\x02\x03\x1e\x1f\x20\x7e\x7f",
      "gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80",
      "invalid \xFF\xFE and \xC3\x28 and \xED\xA0\x80",
      "\xEF\xBF\xBD replacement char",
      "{\"nested\":[1,2,\"three\"]}",
      std::string(5000, 'x') + "\n" + std::string(5000, '"'),
  };
  for (const std::string& sample : samples) {
    EXPECT_EQ(proto::json_quoted(sample), sqlite.quote(sample)) << sample;
  }
}

// What json_quote produces, the parser decodes back to the same text.
TEST(JsonQuote, ParserDecodesQuotedTextBackExactly) {
  proto::Parser parser;
  proto::Event event;
  std::vector<std::string> samples = {"plain", "a\"b\\c", "\b\t\n\f\r", "\x7F\xC3\xBC",
                                      "\xF0\x9F\x98\x80", std::string("x\0y", 3)};
  for (int b = 1; b < 0x80; ++b) {
    samples.push_back("<" + single_byte(b) + ">");
  }
  for (const std::string& sample : samples) {
    ASSERT_TRUE(proto::is_valid_utf8(sample));
    const std::string line = R"({"event":"error","sid":"s1","msg":)" + proto::json_quoted(sample) + "}";
    const proto::ParseOutcome outcome = parser.parse(line, 0, event);
    ASSERT_TRUE(outcome.ok) << outcome.reject_reason << " for " << line;
    const auto* error = event.as<proto::Error>();
    ASSERT_NE(error, nullptr);
    ASSERT_TRUE(error->msg.has_value());
    EXPECT_EQ(*error->msg, sample);
    EXPECT_TRUE(event.problems.empty()) << event.problems;
  }
}
