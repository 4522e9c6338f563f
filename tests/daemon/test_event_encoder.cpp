// The compact event layout must give back git's exact bytes: the `events`
// view rebuilds each line from integer columns plus the stored body.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <string>

#include "db/event_codec.hpp"
#include "db/event_types.hpp"
#include "db/schema.hpp"
#include "proto/event.hpp"
#include "proto/utf8.hpp"
#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

std::string sid_of(const std::string& line) {
  const std::string key = "\"sid\":\"";
  const auto begin = line.find(key) + key.size();
  return line.substr(begin, line.find('"', begin) - begin);
}

// Every column of every row of `view`, each as its type and text.
std::vector<std::vector<std::string>> rows_of(db::Database& db, const std::string& view, const std::string& order) {
  db::Statement s = db.prepare("SELECT * FROM " + view + " ORDER BY " + order);
  std::vector<std::vector<std::string>> rows;
  while (s.step()) {
    auto& row = rows.emplace_back();
    for (int c = 0; c < s.column_count(); ++c) {
      row.push_back(std::to_string(s.column_type(c)) + ":" + std::string(s.column_blob(c)));
    }
  }
  return rows;
}

void ingest_captured_traces(StorePipeline& store) {
  const std::string traces = std::string(TRACE2D_TEST_DATA) + "/traces";
  for (const auto& entry : std::filesystem::directory_iterator(traces)) {
    ASSERT_TRUE(store.ingest(read_lines(entry.path().string())).empty()) << entry.path();
  }
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
  // And every region event's leading members were taken out of its body.
  EXPECT_EQ(m_store.db().query_int("SELECT count(*) FROM event_store WHERE type IN"
                                   " (SELECT id FROM names WHERE text IN ('region_enter', 'region_leave')) AND (nesting IS NULL OR body LIKE '%\"nesting\":%')"),
            0);
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
  EXPECT_EQ(m_store.db().query_int("SELECT count(*) FROM names"), 33);  // 30 event types + thread, file, key
}

// The members taken out of the body come back as they were sent, and only
// those that can: other number formats, escapes, another order, a sender
// over its share of names all stay in the body.
TEST_F(EventEncoderTest, LeadingMembersAreTakenOnlyWhenTheyComeBackExactly) {
  const std::string head =
      R"({"event":"region_enter","sid":"s5","thread":"main","time":"2026-11-21T23:51:01.566003Z","file":"a.c","line":7)";
  const std::string leave =
      R"({"event":"region_leave","sid":"s5","thread":"main","time":"2026-11-21T23:51:01.566009Z","file":"a.c","line":8)";
  const std::string data =
      R"({"event":"data","sid":"s5","thread":"main","time":"2026-11-21T23:51:01.566010Z","file":"a.c","line":9)";
  struct Case {
    std::string line;
    int taken;  // how many of the leading columns hold a value
  };
  const std::vector<Case> cases = {
      {head + R"(,"repo":1,"nesting":1,"category":"index","label":"do_read_index","msg":".git/index"})", 4},
      {leave + R"(,"repo":1,"t_rel":0.000089,"nesting":1,"category":"index","label":"do_read_index"})", 5},
      {data + R"(,"repo":1,"t_abs":12.000741,"t_rel":0.000043,"nesting":2,"category":"index","key":"k","value":"2"})",
       6},
      {head + R"(,"nesting":-1,"category":"caf\u00e9"})", 1},          // an escape stays
      {head + R"(,"nesting":2,"category":"café","label":"a,b"})", 3},  // UTF-8 and a comma are fine
      {head + R"(,"nesting":2,"label":"l","category":"c"})", 2},       // category after label stays
      {leave + R"(,"t_rel":1.5,"nesting":1})", 0},                     // not git's %.6f: all stay
      {leave + R"(,"t_rel":0.0000010,"nesting":1})", 0},
      {leave + R"(,"t_rel":-0.000001,"nesting":1})", 0},
      {leave + R"(,"t_rel":1e-06,"nesting":1})", 0},
      {head + R"(,"repo":1.0,"nesting":1})", 0},
      {head + R"(,"repo":99999999999999999999,"nesting":1})", 0},
      {head + R"(,"repo":1,"nesting":3,"category":5,"label":"x"})", 2},
      {head + R"(,"repo":1,"nesting":3,"category":"","label":"x"})", 4},
      {head + R"(,"repo":2})", 1},
      {head + R"(,"msg":"m","repo":2})", 0},
      {head + R"(})", 0},
      {data + R"(,"nesting":1,"category":"index","key":"a\tb","value":"2"})", 2},  // an escaped key stays
  };
  std::vector<std::string> lines;
  for (const Case& c : cases) {
    lines.push_back(c.line);
  }
  const auto rejects = m_store.ingest(lines);
  ASSERT_TRUE(rejects.empty()) << rejects.front();
  db::Statement s = m_store.db().prepare(
      "SELECT v.json, (e.repo IS NOT NULL) + (e.t_abs_us IS NOT NULL) + (e.t_rel_us IS NOT NULL)"
      " + (e.nesting IS NOT NULL) + (e.category IS NOT NULL) + (e.label IS NOT NULL) + (e.key IS NOT NULL), e.body"
      " FROM events v JOIN event_store e ON e.session = v.id >> 32 AND e.seq = v.seq ORDER BY v.seq");
  for (const Case& c : cases) {
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.column_text(0), c.line);
    EXPECT_EQ(s.column_int(1), c.taken) << c.line << " kept " << s.column_text(2);
  }
  EXPECT_FALSE(s.step());
  // The typed columns read the same whether a member was taken or not.
  EXPECT_EQ(m_store.db().query_int("SELECT count(*) FROM events WHERE seq IN (0, 1, 2) AND category = 'index'"
                                   " AND repo = 1 AND typeof(nesting) = 'integer'"),
            3);
  EXPECT_EQ(m_store.db().query_int("SELECT t_abs = 12.000741 AND t_rel = 0.000043 FROM events WHERE seq = 2"), 1);
  EXPECT_EQ(m_store.db().query_int("SELECT t_rel = 0.000089 FROM events WHERE seq = 1"), 1);
  EXPECT_EQ(m_store.db().query_text("SELECT category FROM events WHERE seq = 4"), "caf\xC3\xA9");
  EXPECT_EQ(m_store.db().query_text("SELECT label FROM events WHERE seq = 5"), "l");
  EXPECT_EQ(m_store.db().query_text("SELECT category FROM data WHERE seq = 2"), "index");
}

// A sender over its share of names keeps its categories and labels in the
// body: nothing of theirs is lost, and nobody else's share is used.
TEST(EventEncoderNames, OverItsShareASenderKeepsItsNamesInTheBody) {
  TempDir dir;
  StorePipeline store{dir, {}, store::NameTable::k_default_max_names, 8};
  std::vector<std::string> lines;
  for (int i = 0; i < 20; ++i) {
    lines.push_back(R"({"event":"region_enter","sid":"s6","thread":"main","time":"2026-11-21T23:51:01.566003Z",)"
                    R"("file":"a.c","line":7,"repo":1,"nesting":1,"category":"c)" +
                    std::to_string(i) + R"(","label":"l"})");
  }
  ASSERT_TRUE(store.ingest(lines, from(1000, 1)).empty());
  EXPECT_GT(store.db().query_int("SELECT count(*) FROM event_store WHERE category IS NULL AND nesting = 1"
                                 " AND body LIKE ',\"category\":%'"),
            0);
  db::Statement s = store.db().prepare("SELECT json FROM events ORDER BY seq");
  for (const std::string& line : lines) {
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.column_text(0), line);
  }
}

// Schema v15 on a database trace2d 13 wrote (its rows keep the whole
// remainder in `body`): every row of the views reads the same after the
// migration, and new rows, in the new layout, read beside them.
TEST(EventStoreMigration, RowsOfVersion13ReadTheSameAfterMigrating) {
  TempDir source_dir;
  StorePipeline source{source_dir};
  ingest_captured_traces(source);
  ASSERT_GT(source.db().query_int("SELECT count(*) FROM event_store WHERE category IS NOT NULL"), 100);

  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> views = {
      {"events", "id"}, {"data", "sid, seq"},    {"regions", "id"},         {"errors", "sid, seq"},
      {"params", "sid, seq"}, {"timers", "sid, seq"}, {"counters", "sid, seq"}, {"threads", "sid, start_seq"},
      {"execs", "sid, seq"}};
  std::vector<std::vector<std::vector<std::string>>> before;
  {
    db::Database old(dir.file("store.db"), db::OpenMode::read_write_create);
    db::apply_migrations(old, 13);
    ASSERT_EQ(db::current_schema_version(old), 13);
    // The rows trace2d 13 wrote for the same lines: the whole remainder in
    // `body`, which v15's event_parts gives back.
    old.exec("ATTACH '" + source.path() + "' AS latest");
    old.exec("INSERT OR IGNORE INTO names SELECT * FROM latest.names");
    // The columns version 13 had (later versions add more).
    std::string columns;
    for (db::Statement info = old.prepare("SELECT name FROM pragma_table_info('sessions', 'main')"); info.step();) {
      columns += (columns.empty() ? "" : ", ") + std::string(info.column_text(0));
    }
    old.exec("INSERT INTO sessions (" + columns + ") SELECT " + columns + " FROM latest.sessions");
    old.exec("INSERT INTO event_store (session, seq, type, thread, time_us, file, line, body, raw)"
             " SELECT session, seq, type, thread, time_us, file, line, body, raw FROM latest.event_parts");
    for (const char* table : {"region_store", "child_store", "problem_store"}) {
      old.exec(std::string("INSERT INTO ") + table + " SELECT * FROM latest." + table);
    }
    old.exec("DETACH latest");
    for (const auto& [view, order] : views) {
      before.push_back(rows_of(old, view, order));
    }
  }
  ASSERT_GT(before[0].size(), 500u);

  StorePipeline migrated{dir};  // opening for writing migrates
  EXPECT_EQ(db::current_schema_version(migrated.db()), db::latest_schema_version());
  for (std::size_t i = 0; i < views.size(); ++i) {
    EXPECT_EQ(rows_of(migrated.db(), views[i].first, views[i].second), before[i]) << views[i].first;
    // And the same as the new layout gives for the same lines.
    EXPECT_EQ(rows_of(source.db(), views[i].first, views[i].second), before[i]) << views[i].first;
  }
  EXPECT_EQ(migrated.db().query_int("SELECT count(*) FROM event_store WHERE nesting IS NOT NULL"), 0);

  const std::string line =
      R"({"event":"region_enter","sid":"s7","thread":"main","time":"2026-11-21T23:51:01.566003Z",)"
      R"("file":"a.c","line":7,"repo":1,"nesting":1,"category":"index","label":"refresh"})";
  ASSERT_TRUE(migrated.ingest({line}).empty());
  EXPECT_EQ(migrated.db().query_text("SELECT json FROM events WHERE sid = 's7'"), line);
  EXPECT_EQ(migrated.db().query_int("SELECT count(*) FROM event_store WHERE nesting IS NOT NULL"), 1);
  EXPECT_EQ(rows_of(migrated.db(), "events", "id").size(), before[0].size() + 1);
}

// The names as the view's LEFT JOIN finds them.
class StoredNames final : public db::NameTexts {
 public:
  explicit StoredNames(db::Database& db) : m_lookup(db.prepare("SELECT text FROM names WHERE id = ?1")) {}
  std::optional<std::string_view> text(std::int64_t id) override {
    m_lookup.reset();
    m_lookup.bind_int(1, id);
    if (!m_lookup.step()) {
      return std::nullopt;
    }
    m_text = m_lookup.column_text(0);
    return m_text;
  }

 private:
  db::Statement m_lookup;
  std::string m_text;
};

// The codec (db/event_codec.hpp) gives back every stored event as the
// event_parts view does, for every event kind git defines: the real traces,
// and one line of each kind in git's layout (leading members included), so
// that no kind is left to chance.
TEST_F(EventEncoderTest, TheCodecRebuildsEveryKindAsTheViewDoes) {
  ingest_captured_traces(m_store);
  const std::string sid = "20261129T010000.000000Z-H0c0dec00-P00000001";
  const std::string common =
      R"("sid":")" + sid + R"(","thread":"main","time":"2026-11-29T01:00:00.000100Z","file":"x.c","line":7)";
  // Every leading member taken; and some left in the body (a negative
  // t_rel, names with escapes) with those after them.
  const std::string all_taken =
      R"(,"repo":1,"t_abs":0.001234,"t_rel":0.000005,"nesting":2,"category":"cat","label":"lab","key":"k/ey")";
  const std::string some_left =
      R"(,"repo":1,"t_abs":0.001234,"t_rel":-0.000005,"nesting":2,"category":"c\"at","label":"l\u0001abel")";
  std::vector<std::string> lines;
  for (int kind = static_cast<int>(proto::EventKind::version); kind <= static_cast<int>(proto::EventKind::printf);
       ++kind) {
    const std::string name(proto::to_string(static_cast<proto::EventKind>(kind)));
    for (const std::string& leading : {all_taken, some_left}) {
      lines.push_back(R"({"event":")" + name + R"(",)" + common + leading + R"(,"msg":"m","value":{"k":[1,2.5,"x"]}})");
    }
  }
  ASSERT_TRUE(m_store.ingest(lines).empty());
  EXPECT_EQ(m_store.db().query_int("SELECT count(DISTINCT type) FROM event_store WHERE type BETWEEN " +
                                   std::to_string(db::stored_type(proto::EventKind::version)) + " AND " +
                                   std::to_string(db::stored_type(proto::EventKind::printf))),
            30);
  StoredNames names(m_store.db());
  db::Statement rows =
      m_store.db().prepare("SELECT p.obj, e.body, e.type, " + db::leading_column_list("e.") +
                           "  FROM event_store e JOIN event_parts p ON p.session = e.session AND p.seq = e.seq");
  std::size_t compared = 0;
  std::size_t with_leading = 0;
  std::array<std::size_t, db::k_leading_members.size()> taken{};  // rows with each member in its column
  while (rows.step()) {
    const db::LeadingColumns columns = db::read_leading_columns(rows, 3);
    for (std::size_t i = 0; i < columns.size(); ++i) {
      taken[i] += columns[i] ? 1 : 0;
    }
    std::string rebuilt;
    db::append_stored_event_object(rebuilt, rows.column_text(1), columns, names);
    EXPECT_EQ(rebuilt, rows.column_text(0)) << "type " << rows.column_int(2);
    with_leading += std::any_of(columns.begin(), columns.end(), [](const auto& c) { return c.has_value(); }) ? 1 : 0;
    ++compared;
  }
  EXPECT_GT(compared, 500u);
  EXPECT_GT(with_leading, 100u);
  for (std::size_t i = 0; i < taken.size(); ++i) {
    EXPECT_GE(taken[i], 30u) << db::k_leading_members[i].key;
  }
}

// A names row can be missing under an id (a database edited by hand): the
// view's json_quote() of its LEFT JOIN gives null, and so does the codec.
TEST_F(EventEncoderTest, ANameIdThatNamesNothingIsGivenBackAsTheViewGivesIt) {
  const std::string line =
      R"({"event":"region_enter","sid":"20261129T010000.000000Z-H0c0dec00-P00000002","thread":"main",)"
      R"("time":"2026-11-29T01:00:00.000100Z","file":"x.c","line":7,"nesting":1,"category":"gone","label":"kept"})";
  ASSERT_TRUE(m_store.ingest({line}).empty());
  m_store.db().exec("DELETE FROM names WHERE text = 'gone'");
  db::Statement row = m_store.db().prepare("SELECT p.obj, e.body, " + db::leading_column_list("e.") +
                                           "  FROM event_store e JOIN event_parts p"
                                           "    ON p.session = e.session AND p.seq = e.seq"
                                           " WHERE e.category IS NOT NULL");
  ASSERT_TRUE(row.step());
  const std::string view_obj(row.column_text(0));
  EXPECT_NE(view_obj.find(R"("category":null,"label":"kept")"), std::string::npos) << view_obj;
  StoredNames names(m_store.db());
  std::string rebuilt;
  db::append_stored_event_object(rebuilt, row.column_text(1), db::read_leading_columns(row, 2), names);
  EXPECT_EQ(rebuilt, view_obj);
  EXPECT_FALSE(row.step());
}

}  // namespace
}  // namespace trace2d::test
