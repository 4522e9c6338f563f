// What the stitcher keeps in memory for live sessions: each text value cut
// to a size (the event keeps it whole), and what one uid's sessions hold
// bounded per uid, released exactly when they are forgotten, never at
// another uid's cost.

#include <gtest/gtest.h>

#include "daemon/stitch/argv_key.hpp"
#include "daemon/stitch/live_memory.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

constexpr std::size_t k_max_value = 1024;
constexpr std::size_t k_bound = 64 * 1024;

// A JSON array of `count` arguments "arg-<i>-xxxx..." of `width` bytes each.
std::string argv_json(int count, std::size_t width) {
  std::string out = R"(["git","add")";
  for (int i = 0; i < count; ++i) {
    std::string arg = "arg-" + std::to_string(i) + "-";
    arg.resize(width, 'x');
    out += ",\"" + arg + "\"";
  }
  return out + "]";
}

std::vector<std::string> a_whole_process(const std::string& sid, const std::string& argv,
                                         const std::string& verb = "add") {
  return {event_json(sid, "version", R"(,"evt":"3","exe":"2.39.5")"),
          event_json(sid, "start", R"(,"t_abs":0.001,"argv":)" + argv),
          event_json(sid, "cmd_name", R"(,"name":")" + verb + R"(","hierarchy":")" + verb + R"(")"),
          event_json(sid, "exit", R"(,"t_abs":0.25,"code":0)"),
          event_json(sid, "atexit", R"(,"t_abs":0.26,"code":0)")};
}

class StitcherMemory : public ::testing::Test {
 protected:
  static stitch::Stitcher::Options options() {
    stitch::Stitcher::Options o;
    o.max_live_bytes_per_uid = k_bound;
    o.max_value_bytes = k_max_value;
    return o;
  }
  std::optional<std::string> text(const std::string& sql) { return m_store.db().query_text(sql); }
  std::optional<std::int64_t> number(const std::string& sql) { return m_store.db().query_int(sql); }
  stitch::Stitcher& stitcher() { return m_store.stitcher(); }
  void forget_finished() { stitcher().evict(1U << 30, proto::unix_now_us()); }

  TempDir m_dir;
  StorePipeline m_store{m_dir, options()};
};

TEST_F(StitcherMemory, AnArgvOverTheValueBoundIsCutBetweenElementsAndWholeInItsEvent) {
  const std::string argv = argv_json(200, 40);  // about 9 KiB
  ASSERT_TRUE(m_store.ingest(a_whole_process("big-argv", argv), from(1000, 1)).empty());
  const auto kept = text("SELECT argv FROM sessions");
  ASSERT_TRUE(kept);
  EXPECT_LE(kept->size(), k_max_value);
  EXPECT_EQ(number("SELECT json_valid(argv) FROM sessions"), 1);
  // The leading elements, whole: "git", "add", then as many arguments as fit.
  const auto elements = number("SELECT json_array_length(argv) FROM sessions").value_or(0);
  EXPECT_GT(elements, 2);
  EXPECT_LT(elements, 202);
  EXPECT_EQ(text("SELECT json_extract(argv, '$[" + std::to_string(elements - 1) + "]') FROM sessions"),
            "arg-" + std::to_string(elements - 3) + "-" + std::string(40 - 5 - std::to_string(elements - 3).size(), 'x'));
  // The event keeps every argument; a problem on it says what was cut.
  EXPECT_EQ(text("SELECT json_extract(json, '$.argv') FROM events WHERE event = 'start'"), argv);
  EXPECT_EQ(number("SELECT problem_count FROM sessions"), 1);
  const auto problem = text("SELECT message FROM problems p JOIN events e USING (sid, seq) WHERE e.event = 'start'");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("sessions.argv cut to " + std::to_string(kept->size()) + " bytes (limit per value 1024)"),
            std::string::npos)
      << *problem;
  EXPECT_EQ(stitcher().values_cut(), 1U);
  // The rest of the summary is whole.
  EXPECT_EQ(text("SELECT cmd_name || ' ' || status FROM sessions"), "add complete");
}

TEST_F(StitcherMemory, TextValuesOverTheBoundAreCutBetweenCharacters) {
  // "x" then é (two bytes) after é: a cut at 1024 bytes would split one.
  std::string name = "x";
  while (name.size() < 2 * k_max_value) {
    name += "\xC3\xA9";
  }
  const std::string sid = "long-names";
  ASSERT_TRUE(m_store.ingest({event_json(sid, "version", R"(,"evt":"3","exe":")" + name + R"(")"),
                              event_json(sid, "cmd_path", R"(,"path":")" + name + R"(")"),
                              event_json(sid, "def_repo", R"(,"repo":1,"worktree":")" + name + R"(")")},
                             from(1000, 1))
                  .empty());
  for (const std::string column : {"exe", "cmd_path", "worktree"}) {
    const auto kept = text("SELECT " + column + " FROM sessions");
    ASSERT_TRUE(kept) << column;
    EXPECT_EQ(kept->size(), k_max_value - 1) << column;
    EXPECT_TRUE(*kept == name.substr(0, k_max_value - 1)) << column;
  }
  EXPECT_EQ(number("SELECT problem_count FROM sessions"), 3);
  EXPECT_EQ(text("SELECT json_extract(json, '$.worktree') FROM events WHERE event = 'def_repo'"), name);
}

TEST_F(StitcherMemory, ChildrenStillMatchTheirSessionsWhateverTheirArgvsLength) {
  // git runs the child through a shell and reports the shell's pid: only
  // the argv keys link them, and both are longer than a key is kept.
  const std::string path = "/srv/" + std::string(3 * stitch::k_max_argv_key_bytes, 'r');
  const std::string parent = "20261121T100000.000000Z-H00000000-P00000010";
  const std::string child = parent + "/20261121T100000.100000Z-H00000000-P00000012";
  ASSERT_TRUE(m_store
                  .ingest({event_json(parent, "version", R"(,"evt":"3","exe":"2.39.5")"),
                           event_json(parent, "start", R"(,"t_abs":0.001,"argv":["git","fetch"])"),
                           event_json(parent, "child_start",
                                 R"(,"t_abs":0.05,"child_id":0,"child_class":"transport/file","use_shell":true,)"
                                 R"("argv":["git-upload-pack ')" + path + R"('"])",
                                 "10:00:00.050000"),
                           event_json(parent, "child_exit", R"(,"t_abs":0.2,"child_id":0,"pid":11,"code":0,"t_rel":0.15)",
                                 "10:00:00.200000")},
                          from(1000, 1))
                  .empty());
  ASSERT_TRUE(m_store
                  .ingest({event_json(child, "version", R"(,"evt":"3","exe":"2.39.5")", "10:00:00.100000"),
                           event_json(child, "start", R"(,"t_abs":0.001,"argv":["/usr/lib/git-core/git-upload-pack",")" +
                                                    path + R"("])",
                                 "10:00:00.100000")},
                          from(1000, 2))
                  .empty());
  const auto key = text("SELECT argv_key FROM sessions WHERE sid = '" + child + "'");
  ASSERT_TRUE(key);
  EXPECT_LE(key->size(), stitch::k_max_argv_key_bytes);
  EXPECT_EQ(text("SELECT child_sid FROM children"), child);
  // A child whose argv differs only past the kept start is not taken for it.
  EXPECT_NE(stitch::argv_key(std::vector<std::string_view>{"git", path}),
            stitch::argv_key(std::vector<std::string_view>{"git", path + "s"}));
}

TEST_F(StitcherMemory, RegionsWithLongNamesStillPairAndAreCut) {
  const std::string label(3 * k_max_value, 'l');
  const std::string sid = "long-label";
  ASSERT_TRUE(m_store
                  .ingest({event_json(sid, "version", R"(,"evt":"3","exe":"2.39.5")"),
                           event_json(sid, "region_enter", R"(,"t_abs":0.1,"nesting":1,"category":"c","label":")" + label +
                                                          R"(","msg":")" + label + R"(")"),
                           event_json(sid, "region_leave",
                                 R"(,"t_abs":0.3,"t_rel":0.2,"nesting":1,"category":"c","label":")" + label + R"(")")},
                          from(1000, 1))
                  .empty());
  EXPECT_EQ(number("SELECT count(*) FROM regions"), 1);
  EXPECT_EQ(number("SELECT length(label) FROM regions"), static_cast<std::int64_t>(k_max_value));
  EXPECT_EQ(number("SELECT length(msg) FROM regions"), static_cast<std::int64_t>(k_max_value));
  EXPECT_EQ(text("SELECT elapsed FROM regions"), "0.2");
  EXPECT_EQ(text("SELECT json_extract(json, '$.label') FROM events WHERE event = 'region_enter'"), label);
}

TEST_F(StitcherMemory, AUidOverItsBoundLosesItsOwnValuesAndSessionsNotAnothers) {
  // uid 2000 opens sessions with the longest argv kept, never ending them.
  const std::string argv = argv_json(200, 40);
  std::vector<std::string> refused;
  int opened = 0;
  for (; opened < 200 && refused.empty(); ++opened) {
    const std::string sid = "flood-" + std::to_string(opened);
    refused = m_store.ingest({event_json(sid, "version", R"(,"evt":"3","exe":"2.39.5")"),
                              event_json(sid, "start", R"(,"t_abs":0.001,"argv":)" + argv)},
                             from(2000, 1));
  }
  ASSERT_FALSE(refused.empty()) << "the flood was never refused";
  EXPECT_NE(refused.front().find("uid 2000's sessions in memory hold"), std::string::npos) << refused.front();
  EXPECT_NE(refused.front().find("(limit 65536)"), std::string::npos) << refused.front();
  EXPECT_LE(stitcher().live_bytes(2000), k_bound);
  // Before the refusals its last values were no longer kept, and said so.
  EXPECT_GE(number("SELECT count(*) FROM sessions WHERE peer_uid = 2000 AND argv IS NULL"), 1);
  const auto problem =
      text("SELECT message FROM problems WHERE message LIKE '%sessions.argv not kept%' ORDER BY sid LIMIT 1");
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("uid 2000's sessions in memory hold"), std::string::npos) << *problem;
  // Its events are all stored, the refused ones as rejects.
  EXPECT_EQ(number("SELECT count(*) FROM events e JOIN sessions s USING (sid) WHERE s.peer_uid = 2000").value_or(0) +
                static_cast<std::int64_t>(refused.size()),
            2 * opened);

  // uid 1000 is not affected: its whole process, every value whole.
  const std::string argv_1000 = argv_json(10, 20);
  ASSERT_TRUE(m_store.ingest(a_whole_process("victim", argv_1000, "status"), from(1000, 2)).empty());
  EXPECT_EQ(text("SELECT argv FROM sessions WHERE sid = 'victim'"), argv_1000);
  EXPECT_EQ(text("SELECT cmd_name || ' ' || exe || ' ' || status FROM sessions WHERE sid = 'victim'"),
            "status 2.39.5 complete");
  EXPECT_EQ(number("SELECT problem_count FROM sessions WHERE sid = 'victim'"), 0);

  // Once its connection ended and its sessions were committed and
  // forgotten, uid 2000 holds nothing and may open sessions again.
  m_store.end_channel(1);
  m_store.end_channel(2);
  forget_finished();
  EXPECT_EQ(stitcher().live_bytes(2000), 0U);
  EXPECT_EQ(stitcher().live_bytes(1000), 0U);
  EXPECT_TRUE(m_store.ingest(a_whole_process("later", argv), from(2000, 3)).empty());
}

TEST_F(StitcherMemory, ManyFinishedSessionsOnOneOpenConnectionAreBoundedToo) {
  // Finished sessions stay in memory while the connection that carried them
  // is open: they are counted as well, so one connection cannot pile them up.
  std::vector<std::string> lines;
  for (int i = 0; i < 2000; ++i) {
    const std::string sid = "done-" + std::to_string(i);
    lines.push_back(event_json(sid, "version", R"(,"evt":"3","exe":"x")"));
    lines.push_back(event_json(sid, "atexit", R"(,"t_abs":0.1,"code":0)"));
  }
  const auto refused = m_store.ingest(lines, from(2000, 1));
  EXPECT_FALSE(refused.empty());
  EXPECT_LE(stitcher().live_bytes(2000), k_bound);
  EXPECT_LT(stitcher().live_sessions(), 2000U);
  m_store.end_channel(1);
  forget_finished();
  EXPECT_EQ(stitcher().live_sessions(), 0U);
  EXPECT_EQ(stitcher().live_bytes_total(), 0U);
}

TEST_F(StitcherMemory, OpenRegionsOverTheBoundAreStoredUnclosedAndTheirLeavesAlone) {
  const std::string sid = "regions";
  const std::string label(k_max_value, 'r');
  std::vector<std::string> lines{event_json(sid, "version", R"(,"evt":"3","exe":"x")")};
  // About 2 KiB each held open, on a thread each (one stack would reach its
  // depth bound first): over 64 KiB.
  constexpr int k_regions = 200;
  for (int i = 0; i < k_regions; ++i) {
    const std::string thread = "th" + std::to_string(i);
    lines.push_back(R"({"event":"region_enter","sid":")" + sid + R"(","thread":")" + thread +
                    R"(","time":"2026-11-21T10:00:00.100000Z","t_abs":0.1,"nesting":1,"category":"c","label":")" +
                    label + R"(","msg":")" + label + R"("})");
  }
  ASSERT_TRUE(m_store.ingest(lines, from(1000, 1)).empty());
  const std::size_t held = stitcher().live_bytes(1000);
  EXPECT_LE(held, k_bound);
  EXPECT_GT(held, k_bound / 2);
  const auto not_held = number("SELECT count(*) FROM problems WHERE message LIKE 'region not held open%'").value_or(0);
  EXPECT_GT(not_held, 0);
  EXPECT_LT(not_held, k_regions);
  // Every region leaves: the held ones pair, the others stand alone. Either
  // way every region is stored, and what was held is released.
  lines.clear();
  for (int i = 0; i < k_regions; ++i) {
    const std::string thread = "th" + std::to_string(i);
    lines.push_back(R"({"event":"region_leave","sid":")" + sid + R"(","thread":")" + thread +
                    R"(","time":"2026-11-21T10:00:00.300000Z","t_abs":0.3,"t_rel":0.2,"nesting":1,"category":"c","label":")" +
                    label + R"("})");
  }
  ASSERT_TRUE(m_store.ingest(lines, from(1000, 1)).empty());
  EXPECT_EQ(number("SELECT count(*) FROM regions WHERE enter_seq <> leave_seq AND elapsed IS NOT NULL"),
            k_regions - not_held);
  EXPECT_EQ(number("SELECT count(*) FROM regions WHERE enter_seq = leave_seq"), not_held);  // leaves alone
  EXPECT_EQ(number("SELECT count(*) FROM regions WHERE leave_seq IS NULL"), not_held);      // enters unclosed
  EXPECT_LT(stitcher().live_bytes(1000), 2048U);  // the session alone again
}

TEST_F(StitcherMemory, TheAccountReturnsToZeroWhenEverySessionIsForgotten) {
  std::vector<std::string> lines;
  for (int s = 0; s < 5; ++s) {
    const std::string sid = "p" + std::to_string(s);
    lines.push_back(event_json(sid, "version", R"(,"evt":"3","exe":"2.39.5")"));
    lines.push_back(event_json(sid, "start", R"(,"t_abs":0.001,"argv":)" + argv_json(50, 40)));
    lines.push_back(event_json(sid, "cmd_name", R"(,"name":"fetch","hierarchy":"fetch")"));
    lines.push_back(event_json(sid, "cmd_name", R"(,"name":"fetch-again","hierarchy":"fetch/again")"));
    lines.push_back(event_json(sid, "def_repo", R"(,"repo":1,"worktree":"/w")"));
    lines.push_back(event_json(sid, "region_enter", R"(,"t_abs":0.1,"nesting":1,"category":"c","label":"open")"));
    lines.push_back(event_json(sid, "region_enter", R"(,"t_abs":0.1,"nesting":2,"category":"c","label":"closed")"));
    lines.push_back(event_json(sid, "region_leave", R"(,"t_abs":0.2,"t_rel":0.1,"nesting":2,"category":"c","label":"closed")"));
    lines.push_back(event_json(sid, "child_start", R"(,"child_id":0,"argv":["git","gc"])"));
    lines.push_back(event_json(sid, "child_start", R"(,"child_id":1,"argv":["git","gc"])"));
    lines.push_back(event_json(sid, "child_exit", R"(,"child_id":0,"pid":5,"code":0)"));
  }
  ASSERT_TRUE(m_store.ingest(lines, from(1000, 1)).empty());
  // The same sessions on a second connection, and one of uid 3000.
  ASSERT_TRUE(m_store.ingest({event_json("p0", "data", R"(,"category":"c","key":"k","value":"v")")}, from(1000, 2)).empty());
  ASSERT_TRUE(m_store.ingest(a_whole_process("other", argv_json(5, 5)), from(3000, 3)).empty());
  EXPECT_GT(stitcher().live_bytes(1000), 5 * k_max_value);
  EXPECT_GT(stitcher().live_bytes(3000), 0U);
  EXPECT_EQ(stitcher().live_bytes_total(), stitcher().live_bytes(1000) + stitcher().live_bytes(3000));
  m_store.end_channel(3);
  forget_finished();
  EXPECT_EQ(stitcher().live_bytes(3000), 0U);
  EXPECT_GT(stitcher().live_bytes(1000), 0U);  // still running
  m_store.end_channel(2);
  m_store.end_channel(1);
  forget_finished();
  EXPECT_EQ(stitcher().live_sessions(), 0U);
  EXPECT_EQ(stitcher().live_bytes(1000), 0U);
  EXPECT_EQ(stitcher().live_bytes_total(), 0U);
}

TEST(KeptText, AJsonArrayIsCutBetweenElementsAndStaysValid) {
  const std::vector<std::string_view> items{"git", "a\"b", "ccccccccccccccccccccc"};
  EXPECT_EQ(stitch::kept_json_array(items, 100).text, R"(["git","a\"b","ccccccccccccccccccccc"])");
  EXPECT_FALSE(stitch::kept_json_array(items, 100).cut);
  const stitch::KeptText cut = stitch::kept_json_array(items, 20);
  EXPECT_EQ(cut.text, R"(["git","a\"b"])");
  EXPECT_TRUE(cut.cut);
  EXPECT_EQ(stitch::kept_json_array(items, 4).text, "[]");
  EXPECT_EQ(stitch::kept_text("\xC3\xA9\xC3\xA9", 3).text, "\xC3\xA9");
  EXPECT_EQ(stitch::kept_text("abc", 3).text, "abc");
  EXPECT_FALSE(stitch::kept_text("abc", 3).cut);
}

TEST(UidMemory, BoundsEachUidAloneAndNeverTheUnknownOne) {
  stitch::UidMemory memory(100);
  memory.charge(1, 60);
  EXPECT_TRUE(memory.fits(1, 40));
  EXPECT_FALSE(memory.fits(1, 41));
  EXPECT_TRUE(memory.fits(2, 100));
  memory.charge(stitch::UidMemory::k_unknown_uid, 1000);
  EXPECT_TRUE(memory.fits(stitch::UidMemory::k_unknown_uid, 1000));
  EXPECT_EQ(memory.total(), 1060U);
  memory.release(1, 60);
  EXPECT_EQ(memory.held(1), 0U);
  EXPECT_EQ(memory.total(), 1000U);
}

}  // namespace
}  // namespace trace2d::test
