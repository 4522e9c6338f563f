// The exporter loads, for the sessions it sends, only them and the rows that
// place them in their trees (model::load_export_rows). Their spans must be
// those a build of the whole tree gives: same ids, parents, names, times and
// attributes, for every session of the real git traces, alone or together,
// at every detail level.

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/database_setup.hpp"
#include "db/read_transaction.hpp"
#include "db/sqlite.hpp"
#include "model/process_tree.hpp"
#include "model/tree_loader.hpp"
#include "otlp/span_builder.hpp"
#include "otlp/span_ids.hpp"
#include "tests/ctl/imported_traces.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {
namespace {

struct Session {
  std::int64_t id = 0;
  std::string sid;
  std::string root;  // its tree: tree_sid
  model::Owner owner;
};

std::vector<Session> all_sessions(db::Database& db) {
  std::vector<Session> sessions;
  db::Statement select = db.prepare("SELECT id, sid, tree_sid, peer_uid FROM sessions ORDER BY id");
  while (select.step()) {
    sessions.push_back({select.column_int(0), std::string(select.column_text(1)), std::string(select.column_text(2)),
                        model::Owner{select.column_optional_int(3)}});
  }
  return sessions;
}

model::LoadOptions everything();

// The rows of the one tree `sessions` belong to.
std::vector<model::ProcessRows> one_tree(db::Database& db, const std::vector<model::ExportSession>& sessions) {
  std::vector<model::TreeRows> trees = model::load_export_rows(db, sessions, everything());
  if (trees.size() != 1) {
    throw std::runtime_error("expected one tree, got " + std::to_string(trees.size()));
  }
  return std::move(trees.front().rows);
}

model::LoadOptions everything() {
  model::LoadOptions load;
  load.errors = true;
  load.params = true;
  load.annotations = true;
  return load;
}

// One line per span, everything the collector gets of it but attribute values.
std::vector<std::string> describe(const std::vector<otlp::Span>& spans) {
  std::vector<std::string> out;
  for (const otlp::Span& s : spans) {
    std::string line = otlp::to_hex(s.trace_id) + " " + otlp::to_hex(s.span_id) + " <- " +
                       (s.parent_span_id ? otlp::to_hex(*s.parent_span_id) : std::string("none")) + " " + s.name +
                       " " + std::to_string(s.start_time_unix_nano) + ".." + std::to_string(s.end_time_unix_nano) +
                       " status " + std::to_string(static_cast<int>(s.status)) + " events " +
                       std::to_string(s.events.size());
    for (const otlp::Attribute& a : s.attributes) {
      line += " ";
      line += a.key.view();
    }
    out.push_back(std::move(line));
  }
  return out;
}

std::vector<std::string> spans_of(const model::ProcessTree& tree, std::int64_t id, const otlp::ExportRules& rules) {
  std::vector<otlp::Span> spans;
  otlp::append_spans(tree, spans, [id](const model::ProcessInfo& p) { return p.session_id == id; }, rules);
  return describe(spans);
}

void expect_same_spans(const otlp::ExportRules& rules) {
  db::Database db(imported_traces_db(), db::OpenMode::read_only);
  const std::vector<Session> sessions = all_sessions(db);
  ASSERT_GT(sessions.size(), 20u);
  std::map<std::string, model::ProcessTree> whole;
  for (const Session& s : sessions) {
    if (!whole.contains(s.root)) {
      const db::ReadTransaction snapshot(db);
      whole.emplace(s.root, model::build_process_tree(s.root, model::load_process_rows(db, s.root, everything())));
    }
  }
  std::size_t compared = 0;
  std::size_t below = 0;
  for (const Session& s : sessions) {
    // Alone: what a round that sends only this session loads.
    const db::ReadTransaction snapshot(db);
    const model::ProcessTree part = model::build_process_tree(s.root, one_tree(db, {{s.sid, s.root, s.owner, std::nullopt, 0}}));
    const std::vector<std::string> expected = spans_of(whole.at(s.root), s.id, rules);
    EXPECT_EQ(spans_of(part, s.id, rules), expected) << s.sid;
    compared += expected.size();
    below += s.sid.find('/') != std::string::npos ? 1 : 0;
  }
  EXPECT_GT(compared, sessions.size());
  EXPECT_GE(below, 5u) << "the traces hold child gits, whose parents the loader must find";
  // Together: a round with every session, one tree per root; by SID, and
  // by id as the export queue names them (their rows read in one statement).
  for (const bool by_id : {false, true}) {
    std::vector<model::ExportSession> all;
    for (const Session& s : sessions) {
      all.push_back({s.sid, s.root, s.owner, std::nullopt, 0, by_id ? std::optional(s.id) : std::nullopt});
    }
    const db::ReadTransaction snapshot(db);
    const std::vector<model::TreeRows> trees = model::load_export_rows(db, all, everything());
    EXPECT_EQ(trees.size(), whole.size());
    for (const model::TreeRows& rows : trees) {
      const model::ProcessTree part = model::build_process_tree(rows.root, rows.rows);
      for (const Session& s : sessions) {
        if (s.root == rows.root) {
          EXPECT_EQ(spans_of(part, s.id, rules), spans_of(whole.at(rows.root), s.id, rules))
              << s.sid << " with its tree" << (by_id ? ", by id" : "");
        }
      }
    }
  }
}

TEST(ExportLoader, EachSessionsSpansAreThoseOfAWholeTreeBuild) { expect_same_spans({}); }

TEST(ExportLoader, ParentsAboveDroppedOrSummaryProcessesToo) {
  // A dropped fetch: its children hang where it would have; a summary
  // upload-pack has no child spans: its child git hangs under its process.
  otlp::ExportRules rules;
  rules.add_rule("git:fetch=drop");
  rules.add_rule("git:upload-pack=summary");
  rules.add_rule("git:commit=process");
  expect_same_spans(rules);
}

TEST(ExportLoader, LoadsTheSessionsAndTheirAncestorsOnly) {
  db::Database db(imported_traces_db(), db::OpenMode::read_only);
  const db::ReadTransaction snapshot(db);
  const model::Owner owner{db.query_int(std::string("SELECT peer_uid FROM sessions WHERE sid = '") + k_fetch_sid + "'")};
  const std::vector<model::ProcessRows> rows = one_tree(db, {{k_upload_pack_sid, k_fetch_sid, owner, std::nullopt, 0}});
  std::vector<std::string> sids;
  for (const model::ProcessRows& r : rows) {
    sids.push_back(r.info.sid);
  }
  // upload-pack and the fetch above it; not fetch's other children, nor
  // pack-objects below upload-pack.
  EXPECT_EQ(sids, (std::vector<std::string>{k_upload_pack_sid, k_fetch_sid}));
  const std::size_t whole_children = model::load_process_rows(db, k_fetch_sid).front().children.size();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_LT(rows[1].children.size(), whole_children);
  EXPECT_FALSE(rows[1].children.empty()) << "the child_start that ran upload-pack";
}

TEST(ExportLoader, ASessionGraftedUnderAnotherUidsIsNotPlacedInItsTree) {
  // uid 1001's session names uid 1000's fetch as its parent; the stitcher
  // made it the top of a tree of its own (tree_sid). The fetch's child_start
  // was running when it started, so a walk up its SID would hang it under
  // that child span.
  TempDir dir;
  const std::string path = (dir.path() / "t.db").string();
  {
    db::Database db = db::open_for_writing(path);
    db.exec(
        "INSERT INTO sessions (sid, id, parent_sid, root_sid, depth, tree_sid, status, source, peer_uid, sid_pid,"
        " cmd_name, process_start_us, first_received, last_received) VALUES"
        " ('A-P00000010', 1, NULL, 'A-P00000010', 0, 'A-P00000010', 'complete', 'stream', 1000, 16, 'fetch',"
        "  1000000000, 'x', 'x'),"
        " ('A-P00000010/B-P00000011', 2, 'A-P00000010', 'A-P00000010', 1, 'A-P00000010/B-P00000011', 'complete',"
        "  'stream', 1001, 17, 'status', 1000000200, 'x', 'x')");
    db.exec(
        "INSERT INTO child_store (session, child_id, start_seq, argv, start_us, t_start, pid, end_us, elapsed)"
        " VALUES (1, 0, 3, '[\"sh\",\"-c\",\"x\"]', 1000000100, 0.0001, 99, 1010000000, 10.0)");
  }
  db::Database db(path, db::OpenMode::read_only);
  const std::string graft = "A-P00000010/B-P00000011";
  const model::ProcessTree whole = model::build_process_tree(graft, model::load_process_rows(db, graft, everything()));
  const model::ProcessTree part = model::build_process_tree(graft, one_tree(db, {{graft, graft, model::Owner{1001}, std::nullopt, 0}}));
  const std::vector<std::string> expected = spans_of(whole, 2, {});
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_EQ(spans_of(part, 2, {}), expected);
  std::vector<otlp::Span> spans;
  otlp::append_spans(part, spans);
  ASSERT_EQ(spans.size(), 1u);
  // Its own trace, and no parent: the SID's parent is another owner's, in
  // another trace (docs/otlp.md, "Ids").
  EXPECT_EQ(spans[0].parent_span_id, std::nullopt);
  EXPECT_EQ(spans[0].trace_id, otlp::trace_id_of_tree(graft));
  EXPECT_NE(spans[0].trace_id, otlp::trace_id_of("A-P00000010"));
  // The fetch's tree does not hold it, nor does its export.
  const std::vector<model::ProcessRows> fetch = model::load_process_rows(db, "A-P00000010", everything());
  ASSERT_EQ(fetch.size(), 1u);
  EXPECT_EQ(fetch.front().info.sid, "A-P00000010");
  const std::vector<model::TreeRows> fetch_part = model::load_export_rows(db, {{graft, graft, model::Owner{1001}},
                                                                              {"A-P00000010", "A-P00000010",
                                                                               model::Owner{1000}}});
  ASSERT_EQ(fetch_part.size(), 2u);
  EXPECT_EQ(fetch_part[0].rows.size(), 1u);
  EXPECT_EQ(fetch_part[1].rows.size(), 1u);
}

}  // namespace
}  // namespace trace2d::test
