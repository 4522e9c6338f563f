// The compact event layout must give back git's exact bytes: the `events`
// view rebuilds each line from integer columns plus the stored body.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "proto/utf8.hpp"
#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

std::string sid_of(const std::string& line) {
  const std::string key = "\"sid\":\"";
  const auto begin = line.find(key) + key.size();
  return line.substr(begin, line.find('"', begin) - begin);
}

class EventEncoderTest : public ::testing::Test {
 protected:
  TempDir m_dir;
  StorePipeline m_store{m_dir};
};

// Every line of every captured trace round-trips byte for byte.
TEST_F(EventEncoderTest, RealGitTracesRoundTripExactly) {
  std::map<std::string, std::vector<std::string>> by_sid;
  std::size_t total = 0;
  const std::string traces = std::string(TRACE2D_TEST_DATA) + "/traces";
  for (const auto& entry : std::filesystem::directory_iterator(traces)) {
    const auto lines = read_lines(entry.path().string());
    ASSERT_FALSE(lines.empty()) << entry.path();
    EXPECT_TRUE(m_store.ingest(lines).empty()) << entry.path();
    for (const auto& line : lines) {
      by_sid[sid_of(line)].push_back(line);
    }
    total += lines.size();
  }
  ASSERT_GT(total, 500u);

  db::Statement events = m_store.db().prepare(
      "SELECT sid, seq, json, raw FROM events ORDER BY sid, seq");
  std::size_t seen = 0;
  std::size_t repaired = 0;
  while (events.step()) {
    const std::string sid(events.column_text(0));
    const auto seq = static_cast<std::size_t>(events.column_int(1));
    ASSERT_LT(seq, by_sid[sid].size()) << sid;
    const std::string& original = by_sid[sid][seq];
    const std::string json(events.column_text(2));
    if (proto::is_valid_utf8(original)) {
      EXPECT_EQ(json, original);
      EXPECT_TRUE(events.column_is_null(3)) << original;
    } else {
      ++repaired;
      EXPECT_EQ(json, proto::repair_utf8(original));
      EXPECT_EQ(events.column_blob(3), original);
    }
    ++seen;
  }
  EXPECT_EQ(seen, total);
  EXPECT_GE(repaired, 1u);  // invalid_utf8.jsonl
  // Nothing had to be stored whole: git's lines are all in canonical form.
  EXPECT_EQ(m_store.db().query_int("SELECT count(*) FROM event_store WHERE substr(body, 1, 1) = '{'"), 0);
}

TEST_F(EventEncoderTest, ViewColumnsComeFromTheRightFields) {
  const std::string sid = "20261121T235101.565577Z-H0a7c9cdf-P000009e9";
  m_store.ingest({
      R"({"event":"version","sid":")" + sid + R"(","thread":"main","time":"2026-11-21T23:51:01.565683Z","file":"common-main.c","line":50,"evt":"3","exe":"2.39.5"})",
      R"({"event":"region_enter","sid":")" + sid + R"(","thread":"main","time":"2026-11-21T23:51:01.566003Z","file":"read-cache.c","line":2443,"repo":1,"nesting":1,"category":"index","label":"do_read_index","msg":".git/index"})",
      R"({"event":"data","sid":")" + sid + R"(","thread":"th02:preload","time":"2026-11-21T23:51:01.566046Z","file":"read-cache.c","line":2389,"repo":1,"t_abs":0.000741,"t_rel":0.000043,"nesting":2,"category":"index","key":"read/version","value":"2"})",
      R"({"event":"data_json","sid":")" + sid + R"(","thread":"main","time":"2026-11-21T23:51:01.566562Z","file":"tree-walk.c","line":189,"repo":1,"t_abs":0.001257,"t_rel":0.001257,"nesting":1,"category":"traverse_trees","key":"statistics","value":{"traverse_trees_count":1}})",
      R"({"event":"atexit","sid":")" + sid + R"(","thread":"main","time":"2026-11-21T23:51:01.566600Z","file":"trace2/tr2_tgt_event.c","line":204,"t_abs":0.001300,"code":0})",
  });
  db::Statement s = m_store.db().prepare(
      "SELECT event, thread, time, t_abs, t_rel, repo, nesting, category, label, value, file, line"
      " FROM events ORDER BY seq");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "version");
  EXPECT_EQ(s.column_text(2), "2026-11-21T23:51:01.565683Z");
  EXPECT_EQ(s.column_text(9), "2.39.5");
  EXPECT_EQ(s.column_text(10), "common-main.c");
  EXPECT_EQ(s.column_int(11), 50);
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "region_enter");
  EXPECT_EQ(s.column_int(5), 1);
  EXPECT_EQ(s.column_int(6), 1);
  EXPECT_EQ(s.column_text(7), "index");
  EXPECT_EQ(s.column_text(8), "do_read_index");
  EXPECT_EQ(s.column_text(9), ".git/index");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(1), "th02:preload");
  EXPECT_DOUBLE_EQ(s.column_double(3), 0.000741);
  EXPECT_DOUBLE_EQ(s.column_double(4), 0.000043);
  EXPECT_EQ(s.column_text(8), "read/version");
  EXPECT_EQ(s.column_text(9), "2");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(9), R"({"traverse_trees_count":1})");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(2), "2026-11-21T23:51:01.566600Z");
  EXPECT_EQ(s.column_int(9), 0);
  EXPECT_FALSE(s.step());
}

// Lines in other shapes than git's are stored whole: same JSON values back,
// and the exact bytes in `raw` whenever the text differs.
TEST_F(EventEncoderTest, NonCanonicalLinesAreStoredWhole) {
  const std::vector<std::string> lines = {
      R"({"sid":"s1","event":"version","evt":"3","exe":"x"})",                 // key order
      R"( {"event":"start", "sid":"s1", "argv":["a"]} )",                      // spaces
      R"({"event":"cmd_name","sid":"s1","name":"caf\u00e9"})",                // escape git never writes
      R"({"event":"data","sid":"s1","thread":"main","line":5.0,"value":"v"})", // non-integer line
      R"({"event":"exit","sid":"s1","time":"2026-11-21T10:00:00Z","code":0})", // short time
      R"({"event":"brand_new_event","sid":"s1","some":{"nested":[1,2,3]}})",   // unknown type
  };
  ASSERT_TRUE(m_store.ingest(lines).empty());
  db::Statement s = m_store.db().prepare("SELECT json, raw, event FROM events ORDER BY seq");
  for (const std::string& line : lines) {
    ASSERT_TRUE(s.step());
    const std::string json(s.column_text(0));
    // Same JSON value as sent.
    db::Statement same = m_store.db().prepare("SELECT json(?) = json(?)");
    same.bind_text(1, json);
    same.bind_text(2, line);
    ASSERT_TRUE(same.step());
    EXPECT_EQ(same.column_int(0), 1) << json << " vs " << line;
    if (json != line) {
      EXPECT_EQ(s.column_blob(1), line);
    } else {
      EXPECT_TRUE(s.column_is_null(1));
    }
  }
  EXPECT_EQ(m_store.db().query_text("SELECT event FROM events WHERE seq = 5"), "brand_new_event");
  // The time column is always in git's format, whatever the producer sent.
  EXPECT_EQ(m_store.db().query_text("SELECT time FROM events WHERE seq = 4"), "2026-11-21T10:00:00.000000Z");
  EXPECT_EQ(m_store.db().query_text("SELECT cmd_name FROM sessions"), "caf\xC3\xA9");
}

// Times of other producers' shapes are kept exactly as sent, even those of
// git's length, which a rebuilt line would write in git's format; the time
// column is in git's format.
TEST_F(EventEncoderTest, OtherProducersTimesAreKeptAsSent) {
  const std::vector<std::pair<std::string, std::string>> times = {
      {"2026-11-21T10:00:00.1+01:00", "2026-11-21T09:00:00.100000Z"},           // git's length
      {"2026-11-21T10:00:00.123+00Z", "2026-11-21T10:00:00.123000Z"},           // git's length
      {"2026-11-21t10:00:00.123456Z", "2026-11-21T10:00:00.123456Z"},           // git's length
      {"2016-12-31T23:59:60.000000Z", "2016-12-31T23:59:59.999999Z"},           // git's length
      {"2026-11-21T10:00:00.123456+00:00Z", "2026-11-21T10:00:00.123456Z"},     // repo
      {"2026-11-21T10:00:00.1234567+00:00", "2026-11-21T10:00:00.123456Z"},     // GCM
  };
  std::vector<std::string> lines;
  for (const auto& [sent, utc] : times) {
    lines.push_back(R"({"event":"thread_start","sid":"s1","thread":"main","time":")" + sent + R"("})");
  }
  ASSERT_TRUE(m_store.ingest(lines).empty());
  db::Statement s = m_store.db().prepare("SELECT json, time FROM events ORDER BY seq");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.column_text(0), lines[i]);
    EXPECT_EQ(s.column_text(1), times[i].second) << times[i].first;
  }
  EXPECT_EQ(m_store.db().query_text("SELECT count(*) FROM problems"), "0");
}

// repo's "data-json" is stored as data_json (so the data view has it), its
// line as sent.
TEST_F(EventEncoderTest, DataJsonWithAHyphenIsDataJson) {
  const std::string line =
      R"({"event":"data-json","sid":"repo-20261121T100000Z-P00001b0d","thread":"MainThread",)"
      R"("time":"2026-11-21T10:00:00.5+00:00Z","key":"repo/groups","value":"[\"default\"]"})";
  ASSERT_TRUE(m_store.ingest({line}).empty());
  EXPECT_EQ(m_store.db().query_text("SELECT event FROM events"), "data_json");
  EXPECT_EQ(m_store.db().query_text("SELECT json FROM events"), line);
  EXPECT_EQ(m_store.db().query_text("SELECT key || '=' || value || ':' || value_type FROM data"),
            R"(repo/groups=["default"]:string)");
}

// A data_json value that is a string holding no JSON at all (repo's
// "data-json" with a Python list's repr) is a string in the data view, and
// the view still answers; git's own data_json values stay JSON.
TEST_F(EventEncoderTest, DataViewSurvivesAStringThatIsNotJson) {
  ASSERT_TRUE(m_store
                  .ingest({R"({"event":"data-json","sid":"r","time":"2026-11-21T10:00:00+00:00Z","key":"k","value":"['--', 'sync']"})",
                           R"({"event":"data_json","sid":"g","key":"s","category":"c","value":{"a":[1, 2]}})",
                           R"({"event":"data","sid":"g","key":"n","category":"c","value":7})",
                           R"({"event":"data","sid":"g","key":"l","value":["a", "b"]})"})
                  .empty());
  db::Statement s = m_store.db().prepare("SELECT value, value_type FROM data ORDER BY sid DESC, seq");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "['--', 'sync']");
  EXPECT_EQ(s.column_text(1), "string");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), R"({"a":[1,2]})");
  EXPECT_EQ(s.column_text(1), "json");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "7");
  EXPECT_EQ(s.column_text(1), "integer");
  ASSERT_TRUE(s.step());  // repo's multi-valued setting
  EXPECT_EQ(s.column_text(0), R"(["a","b"])");
  EXPECT_EQ(s.column_text(1), "json");
  EXPECT_FALSE(s.step());
}

TEST_F(EventEncoderTest, ProblemsAreStoredBesideTheEvent) {
  ASSERT_TRUE(m_store.ingest({R"({"event":"exit","sid":"s2","code":"zero"})"}).empty());
  EXPECT_EQ(m_store.db().query_int("SELECT count(*) FROM events"), 1);
  const auto message = m_store.db().query_text("SELECT message FROM problems WHERE sid = 's2'");
  ASSERT_TRUE(message);
  EXPECT_NE(message->find("code"), std::string::npos);
  EXPECT_EQ(m_store.db().query_int("SELECT problem_count FROM sessions"), 1);
}

TEST_F(EventEncoderTest, NamesAreInternedOnce) {
  std::vector<std::string> lines;
  for (int i = 0; i < 100; ++i) {
    lines.push_back(R"({"event":"data","sid":"s3","thread":"main","file":"a.c","line":1,"key":"k","value":"v"})");
  }
  m_store.ingest(lines);
  EXPECT_EQ(m_store.db().query_int("SELECT count(*) FROM names WHERE text IN ('main', 'a.c')"), 2);
  EXPECT_EQ(m_store.db().query_int("SELECT count(*) FROM names"), 32);  // 30 event types + 2
}

}  // namespace
}  // namespace trace2d::test
