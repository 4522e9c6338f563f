// The tree loader reads each session's events once, straight from
// event_store, and parses them with simdjson. What it gives must be what
// the documented views (docs/schema.md: data, counters, timers, errors,
// params, threads) give for the same rows, whatever the values: the real
// git traces, and odd values git or another producer may send.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <optional>
#include <string>
#include <vector>

#include "db/database_setup.hpp"
#include "db/sqlite.hpp"
#include "model/process_tree.hpp"
#include "model/tree_loader.hpp"
#include "proto/utf8.hpp"
#include "tests/ctl/imported_traces.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {
namespace {

model::LoadOptions everything() {
  model::LoadOptions load;
  load.annotations = true;
  load.errors = true;
  load.params = true;
  load.details = true;
  return load;
}

std::string text(const db::Statement& s, int column) {
  return s.column_is_null(column) ? std::string() : std::string(s.column_text(column));
}

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& item : list) {
    out += item + '|';
  }
  return out;
}

std::string optional_double(const std::optional<double>& v) { return v ? std::to_string(*v) : "NULL"; }
std::string optional_int(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "NULL"; }

// A value as the loader embeds it in an export: JSON text as it is, other
// text as a JSON string.
std::string as_json(const std::string& value) {
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  if (parser.parse(value).get(element) == simdjson::SUCCESS) {
    return value;
  }
  std::string quoted;
  proto::append_json_string(quoted, value);
  return quoted;
}

// What the views say of one session, one line per row, in the loader's
// terms.
std::vector<std::string> from_views(db::Database& db, const std::string& sid) {
  std::vector<std::string> out;
  db::Statement annotations = db.prepare(R"sql(
SELECT 'data', thread, category, key, CASE value_type WHEN 'string' THEN json_quote(value) ELSE value END,
       t_abs, seq, value
  FROM data WHERE sid = ?1
UNION ALL
SELECT 'counter', thread, category, name, count, NULL, seq, NULL FROM counters WHERE sid = ?1
UNION ALL
SELECT 'timer', thread, category, name,
       json_object('intervals', intervals, 't_total', t_total, 't_min', t_min, 't_max', t_max), NULL, seq, NULL
  FROM timers WHERE sid = ?1
ORDER BY 7)sql");
  annotations.bind_text(1, sid);
  while (annotations.step()) {
    out.push_back("annotation " + text(annotations, 0) + " [" + text(annotations, 1) + "] [" + text(annotations, 2) +
                  "] [" + text(annotations, 3) + "] = " +
                  (annotations.column_is_null(4) ? std::string("null") : as_json(text(annotations, 4))) + " t_abs " +
                  optional_double(annotations.column_optional_double(5)) + " text [" + text(annotations, 7) + "]");
  }
  db::Statement errors = db.prepare(
      "SELECT x.seq, x.thread, x.msg, x.fmt, s.time_base_us + e.time_us FROM errors x JOIN sessions s ON s.sid = x.sid"
      " LEFT JOIN event_store e ON e.session = s.id AND e.seq = x.seq WHERE x.sid = ?1 ORDER BY x.seq");
  errors.bind_text(1, sid);
  while (errors.step()) {
    out.push_back("error " + std::to_string(errors.column_int(0)) + " [" + text(errors, 1) + "] [" + text(errors, 2) +
                  "] [" + text(errors, 3) + "] at " + optional_int(errors.column_optional_int(4)));
  }
  db::Statement params = db.prepare(
      "SELECT p.param, p.value, json_extract(e.json, '$.scope') FROM params p"
      " JOIN events e ON e.sid = p.sid AND e.seq = p.seq WHERE p.sid = ?1 ORDER BY p.seq");
  params.bind_text(1, sid);
  while (params.step()) {
    out.push_back("param [" + text(params, 0) + "] = [" + text(params, 1) + "] scope " +
                  (params.column_is_null(2) ? std::string("NULL") : text(params, 2)));
  }
  // Where each data, counter and timer came, its nesting (data), and whether
  // it is a thread's (th_counter, th_timer); the details of the process
  // trace2receiver sends (cmd_ancestry, alias, def_repo, printf).
  db::Statement figures = db.prepare(
      "SELECT seq, CASE WHEN event IN ('data', 'data_json') THEN nesting END, event IN ('th_counter', 'th_timer')"
      " FROM events WHERE sid = ?1 AND event IN ('data', 'data_json', 'counter', 'th_counter', 'timer', 'th_timer')"
      " ORDER BY seq");
  figures.bind_text(1, sid);
  while (figures.step()) {
    out.push_back("figure " + std::to_string(figures.column_int(0)) + " nesting " +
                  optional_int(figures.column_optional_int(1)) + " own " + std::to_string(figures.column_int(2)));
  }
  db::Statement details = db.prepare(
      "SELECT event, json_extract(json, '$.ancestry'), json_extract(json, '$.alias'), json_extract(json, '$.argv'),"
      " repo, json_extract(json, '$.worktree'), json_extract(json, '$.msg')"
      " FROM events WHERE sid = ?1 AND event IN ('cmd_ancestry', 'alias', 'def_repo', 'printf')"
      " AND (event != 'def_repo' OR typeof(repo) = 'integer') ORDER BY seq");
  details.bind_text(1, sid);
  std::string ancestry = "ancestry ";
  std::string alias = "alias NULL ";
  std::vector<std::string> repos;
  std::vector<std::string> messages;
  while (details.step()) {
    const std::string event = text(details, 0);
    if (event == "cmd_ancestry") {
      ancestry = "ancestry " + joined(model::parse_string_array(text(details, 1)));
    } else if (event == "alias") {
      alias = "alias [" + text(details, 2) + "] " + joined(model::parse_string_array(text(details, 3)));
    } else if (event == "def_repo") {
      repos.push_back("repo " + optional_int(details.column_optional_int(4)) + " [" + text(details, 5) + "]");
    } else {
      messages.push_back("printf [" + text(details, 6) + "]");
    }
  }
  out.push_back(ancestry);
  out.push_back(alias);
  out.insert(out.end(), repos.begin(), repos.end());
  out.insert(out.end(), messages.begin(), messages.end());
  db::Statement threads = db.prepare("SELECT thread, start_seq, t_start, elapsed FROM threads WHERE sid = ?1");
  threads.bind_text(1, sid);
  while (threads.step()) {
    out.push_back("thread [" + text(threads, 0) + "] " + std::to_string(threads.column_int(1)) + " " +
                  optional_double(threads.column_optional_double(2)) + " " +
                  optional_double(threads.column_optional_double(3)));
  }
  db::Statement regions = db.prepare(
      "SELECT enter_seq, leave_seq, parent_region & 4294967295, thread, nesting, category, label, msg, repo, t_start,"
      " elapsed FROM regions WHERE sid = ?1 ORDER BY enter_seq");
  regions.bind_text(1, sid);
  while (regions.step()) {
    out.push_back("region " + std::to_string(regions.column_int(0)) + " " +
                  optional_int(regions.column_optional_int(1)) + " " + optional_int(regions.column_optional_int(2)) +
                  " [" + text(regions, 3) + "] " + optional_int(regions.column_optional_int(4)) + " [" +
                  text(regions, 5) + "] [" + text(regions, 6) + "] [" + text(regions, 7) + "] " +
                  optional_int(regions.column_optional_int(8)) + " " +
                  optional_double(regions.column_optional_double(9)) + " " +
                  optional_double(regions.column_optional_double(10)));
  }
  // The children view, and the thread of each child_start's event.
  db::Statement children = db.prepare(
      "SELECT c.child_id, c.start_seq, th.text, c.child_class, c.hook_name, c.argv, c.use_shell, c.pid, c.code,"
      " c.ready, c.t_start, c.elapsed, c.child_sid FROM children c"
      " LEFT JOIN event_store e ON e.session = (SELECT id FROM sessions WHERE sid = ?1) AND e.seq = c.start_seq"
      " LEFT JOIN names th ON th.id = e.thread WHERE c.sid = ?1 ORDER BY c.child_id");
  children.bind_text(1, sid);
  while (children.step()) {
    out.push_back("child " + std::to_string(children.column_int(0)) + " " +
                  optional_int(children.column_optional_int(1)) + " [" +
                  (children.column_is_null(2) ? std::string("main") : text(children, 2)) + "] [" +
                  text(children, 3) + "] [" + text(children, 4) + "] " +
                  (children.column_is_null(5) ? std::string() : joined(model::parse_string_array(text(children, 5)))) +
                  " " +
                  optional_int(children.column_optional_int(6).value_or(0) != 0 ? 1 : 0) + " " +
                  optional_int(children.column_optional_int(7)) + " " + optional_int(children.column_optional_int(8)) +
                  " [" + text(children, 9) + "] " + optional_double(children.column_optional_double(10)) + " " +
                  optional_double(children.column_optional_double(11)) + " [" + text(children, 12) + "]");
  }
  // Wanted only where a process never said how long it ran.
  db::Statement last = db.prepare(
      "SELECT time_base_us + (SELECT max(e.time_us) FROM event_store e WHERE e.session = sessions.id)"
      " FROM sessions WHERE sid = ?1 AND elapsed IS NULL");
  last.bind_text(1, sid);
  out.push_back("last event " + (last.step() ? optional_int(last.column_optional_int(0)) : std::string("NULL")));
  return out;
}

std::vector<std::string> from_loader(const model::ProcessRows& rows) {
  std::vector<std::string> out;
  for (const model::Annotation& a : rows.info.annotations) {
    out.push_back("annotation " + a.kind + " [" + a.thread + "] [" + a.category + "] [" + a.name +
                  "] = " + a.json_value + " t_abs " + optional_double(a.t_abs) + " text [" + a.text + "]");
  }
  for (const model::ErrorInfo& e : rows.info.errors) {
    out.push_back("error " + std::to_string(e.seq) + " [" + e.thread + "] [" + e.msg + "] [" + e.fmt + "] at " +
                  optional_int(e.time_us));
  }
  for (const model::ParamInfo& p : rows.info.params) {
    out.push_back("param [" + p.param + "] = [" + p.value + "] scope " + p.scope.value_or("NULL"));
  }
  for (const model::Annotation& a : rows.info.annotations) {
    out.push_back("figure " + std::to_string(a.seq) + " nesting " + optional_int(a.nesting) + " own " +
                  std::to_string(a.per_thread ? 1 : 0));
  }
  out.push_back("ancestry " + joined(rows.info.ancestry));
  out.push_back(rows.info.alias ? "alias [" + *rows.info.alias + "] " + joined(rows.info.alias_argv)
                                : std::string("alias NULL "));
  for (const model::RepoInfo& r : rows.info.repos) {
    out.push_back("repo " + std::to_string(r.repo) + " [" + r.worktree + "]");
  }
  for (const std::string& m : rows.info.printf_messages) {
    out.push_back("printf [" + m + "]");
  }
  for (const model::ThreadInfo& t : rows.threads) {
    out.push_back("thread [" + t.name + "] " + optional_int(t.start_seq) + " " + optional_double(t.t_start) + " " +
                  optional_double(t.elapsed));
  }
  for (const model::RegionInfo& r : rows.regions) {
    out.push_back("region " + std::to_string(r.seq) + " " + optional_int(r.leave_seq) + " " +
                  optional_int(r.parent_seq) + " [" + r.thread + "] " + optional_int(r.nesting) + " [" + r.category +
                  "] [" + r.label + "] [" + r.msg + "] " + optional_int(r.repo) + " " + optional_double(r.t_start) +
                  " " + optional_double(r.elapsed));
  }
  std::vector<const model::ChildInfo*> children;
  for (const model::ChildInfo& c : rows.children) {
    children.push_back(&c);
  }
  std::sort(children.begin(), children.end(),
            [](const model::ChildInfo* a, const model::ChildInfo* b) { return a->child_id < b->child_id; });
  for (const model::ChildInfo* c : children) {
    out.push_back("child " + std::to_string(c->child_id) + " " + optional_int(c->start_seq) + " [" + c->thread +
                  "] [" + c->child_class + "] [" + c->hook_name + "] " + joined(c->argv) + " " +
                  optional_int(c->use_shell ? 1 : 0) + " " + optional_int(c->pid) + " " + optional_int(c->code) +
                  " [" + c->ready + "] " + optional_double(c->t_start) + " " + optional_double(c->elapsed) + " [" +
                  c->child_sid.value_or("") + "]");
  }
  out.push_back("last event " + optional_int(rows.info.last_event_us));
  return out;
}

// Every session of the database: the loader alone, and in a batch as the
// exporter loads them, against the views. Returns how many lines were compared.
std::size_t expect_loader_matches_views(db::Database& db) {
  std::vector<model::ExportSession> all;
  // With their ids, as the export queue names them.
  db::Statement sessions =
      db.prepare("SELECT sid, coalesce(tree_sid, root_sid), peer_uid, id FROM sessions ORDER BY id");
  while (sessions.step()) {
    all.push_back({std::string(sessions.column_text(0)), std::string(sessions.column_text(1)),
                   model::Owner{sessions.column_optional_int(2)}, std::nullopt, 0, sessions.column_int(3)});
  }
  std::size_t compared = 0;
  for (const model::ExportSession& session : all) {
    const std::vector<model::ProcessRows> rows = model::load_process_rows(db, session.sid, everything());
    const auto it = std::find_if(rows.begin(), rows.end(),
                                 [&](const model::ProcessRows& r) { return r.info.sid == session.sid; });
    EXPECT_NE(it, rows.end()) << session.sid;
    if (it != rows.end()) {
      const std::vector<std::string> expected = from_views(db, session.sid);
      EXPECT_EQ(from_loader(*it), expected) << session.sid;
      compared += expected.size();
    }
  }
  for (model::TreeRows& tree : model::load_export_rows(db, all, everything())) {
    for (const model::ProcessRows& rows : tree.rows) {
      if (std::any_of(all.begin(), all.end(), [&](const model::ExportSession& s) { return s.sid == rows.info.sid; })) {
        EXPECT_EQ(from_loader(rows), from_views(db, rows.info.sid)) << rows.info.sid << " in a batch";
      }
    }
  }
  return compared;
}

TEST(TreeLoaderViews, TheRealGitTracesGiveWhatTheViewsGive) {
  db::Database db(imported_traces_db(), db::OpenMode::read_only);
  EXPECT_GT(expect_loader_matches_views(db), 100u);
}

TEST(TreeLoaderViews, OddValuesGiveWhatTheViewsGive) {
  TempDir dir;
  db::Database db = db::open_for_writing(dir.file("odd.db"));
  db.exec("INSERT INTO names (id, text) VALUES (1000, 'main'), (1001, 'th01:worker')");
  db.exec(
      "INSERT INTO sessions (sid, id, root_sid, depth, status, source, first_received, last_received, time_base_us,"
      " process_start_us) VALUES ('odd', 1, 'odd', 0, 'complete', 'stream', 'x', 'x', 1000000000, 1000000500)");
  const std::vector<std::pair<int, std::string>> events = {
      {24, R"(,"t_abs":0.25,"nesting":1,"category":"c","key":"int","value":42)"},
      {24, R"(,"t_abs":0.1234567890123456789,"category":"c","key":"real","value":0.1)"},
      {24, R"(,"category":"c","key":"big","value":1e300)"},
      {24, R"(,"category":"c","key":"true","value":true)"},
      {24, R"(,"category":"c","key":"false","value":false)"},
      {24, R"(,"category":"c","key":"null","value":null)"},
      {24, R"(,"category":"c","key":"missing")"},
      {24, R"(,"category":"c","key":"text","value":"a \"quoted\"\ttab\u0001 and \\ é")"},
      {24, R"(,"category":"c","key":"numeric text","value":"17")"},
      {24, R"(,"category":"c","key":"array","value":["x",1,{"y":null}])"},
      {24, R"(,"category":"c","key":"huge","value":18446744073709551615)"},
      {24, R"(,"category":"c","key":"negative","value":-9223372036854775808)"},
      {24, R"(,"category":7,"key":8,"value":"number-named")"},
      {25, R"(,"category":"j","key":"object","value":{"a":[1,2],"b":"c"})"},
      {25, R"(,"category":"j","key":"int","value":3)"},
      {25, R"(,"category":"j","key":"string","value":"['--', 'sync']")"},
      {25, R"(,"category":"j","key":"bool","value":true)"},
      {25, R"(,"category":"j","key":"real","value":2.5)"},
      {25, R"(,"category":"j","key":"null","value":null)"},
      {26, R"(,"category":"t","name":"timer","intervals":3,"t_total":0.5,"t_min":0.125,"t_max":0.25)"},
      {27, R"(,"category":"t","name":"odd timer","intervals":"three","t_total":[1],"t_min":null)"},
      {28, R"(,"category":"k","name":"count","count":12)"},
      {28, R"(,"category":"k","name":"oops","count":"oops")"},
      {29, R"(,"category":"k","name":"text 42","count":"42")"},
      {29, R"(,"category":"k","name":"missing")"},
      {7, R"(,"msg":"fatal: bad\nthing","fmt":"fatal: %s")"},
      {7, R"(,"msg":5)"},
      {20, R"(,"scope":"command","param":"core.x","value":"1")"},
      {20, R"(,"param":"no.value")"},
      {20, R"(,"param":"number","value":2.75)"},
      // Stored whole (not in git's layout): the body is the whole event.
      {24, R"({"event":"data","sid":"odd","category":"w","key":"whole","value":"kept"})"},
      {16, R"(,"thread":"th01:worker")"},
      {17, R"(,"thread":"th01:worker","t_rel":0.75)"},
      {17, R"(,"thread":"th01:worker","t_rel":9)"},
      {16, R"(,"thread":"th02:none")"},
      {24, ""},
  };
  db::Statement insert = db.prepare(
      "INSERT INTO event_store (session, seq, type, thread, time_us, body) VALUES (1, ?1, ?2, ?3, ?4, ?5)");
  std::int64_t seq = 0;
  for (const auto& [type, body] : events) {
    ++seq;
    insert.reset();
    insert.bind_int(1, seq);
    insert.bind_int(2, type);
    if (type == 16 || type == 17) {
      insert.bind_int(3, body.find("th01") != std::string::npos ? 1001 : 1002);
    } else if (seq % 3 != 0) {
      insert.bind_int(3, 1000);
    } else {
      insert.bind_null(3);
    }
    if (seq % 5 != 0) {
      insert.bind_int(4, seq * 1000);
    } else {
      insert.bind_null(4);
    }
    insert.bind_text(5, body);
    insert.run();
  }
  // Rows as schema v15 writes them, their leading members in columns: the
  // loader writes them back as event_parts does (a name quoted as
  // json_quote() quotes it; an id without a name, as if the member were null).
  db.exec("INSERT INTO names (id, text) VALUES (1003, 'quo\"te' || char(9) || 'tab\\ ' || char(1))");
  db.exec(
      "INSERT INTO event_store (session, seq, type, thread, time_us, body, repo, t_abs_us, t_rel_us, nesting,"
      " category, label) VALUES"
      " (1, 50, 24, 1000, 50000, ',\"key\":\"columns\",\"value\":\"v\"', 1, 1500000, 250, 2, 1003, NULL),"
      " (1, 51, 24, NULL, NULL, ',\"key\":\"no name\",\"value\":7', NULL, 0, 999999, NULL, 1004, NULL),"
      " (1, 52, 26, 1000, 52000, ',\"name\":\"t\",\"intervals\":1,\"t_total\":0.5,\"t_min\":0.5,\"t_max\":0.5',"
      "  NULL, 12000001, NULL, 1, 1003, 1000),"
      " (1, 53, 7, 1000, 53000, ',\"msg\":\"m\",\"fmt\":\"f\"', 3, 7, 8, NULL, NULL, NULL)");
  // Leading members the loader reads from their columns, not from a
  // rebuilt object: a name that is not UTF-8 (git's raw bytes), a time
  // below zero; a thread's exit, a repository, a data key from their
  // columns.
  db.exec("INSERT INTO names (id, text) VALUES (1005, 'bad ' || CAST(X'FF' AS TEXT)), (1006, 'dup')");
  db.exec(
      "INSERT INTO event_store (session, seq, type, thread, time_us, body, repo, t_abs_us, t_rel_us, nesting,"
      " category, label, key) VALUES"
      " (1, 60, 24, 1000, 60000, ',\"value\":1', NULL, 100, NULL, NULL, 1005, NULL, 1006),"
      " (1, 62, 24, 1000, 62000, ',\"value\":3', NULL, -2000000, NULL, -4, 1006, NULL, 1006),"
      " (1, 64, 24, 1000, 64000, ',\"category\":\"body\",\"value\":5', NULL, NULL, NULL, NULL, NULL, NULL, 1006),"
      " (1, 65, 16, 1001, 65000, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
      " (1, 66, 17, 1001, 66000, '', NULL, NULL, 1250000, NULL, NULL, NULL, NULL),"
      " (1, 67, 22, 1000, 67000, ',\"worktree\":\"/w\"', 5, NULL, NULL, NULL, NULL, NULL, NULL),"
      " (1, 68, 28, 1000, 68000, ',\"name\":\"n\",\"count\":1', NULL, NULL, 999999, NULL, 1005, NULL, NULL)");
  // Children found by pid, through a shell (by command, in the window), or
  // not at all, from threads with and without a name.
  db.exec(
      "INSERT INTO sessions (sid, id, parent_sid, root_sid, depth, status, source, first_received, last_received,"
      " sid_pid, argv_key, process_start_us, time_base_us, elapsed) VALUES"
      " ('odd/x', 3, 'odd', 'odd', 1, 'complete', 'stream', 'x', 'x', 77, 'git status', 1000002000, 1000002000, 1),"
      " ('odd/y', 4, 'odd', 'odd', 1, 'complete', 'stream', 'x', 'x', 78, 'git log', 1000009000, 1000009000, 1)");
  db.exec(
      "INSERT INTO child_store (session, child_id, start_seq, child_class, hook_name, argv, argv_key, use_shell,"
      " start_us, t_start, pid, code, ready, elapsed, end_us) VALUES"
      " (1, 0, 2, 'git', NULL, '[\"git\",\"status\"]', 'git status', 0, 1000001000, 0.5, 77, 0, NULL, 1.5,"
      "  1000003000),"
      " (1, 1, 32, 'hook', 'pre-commit', '[\"sh\",\"-c\",\"x\"]', 'sh -c x', 1, NULL, NULL, 5, 1, 'ready', NULL,"
      "  NULL),"
      " (1, 2, NULL, NULL, NULL, '[\"git\",\"log\"]', 'git log', 1, 1000008000, 8.0, 12, NULL, NULL, NULL, NULL),"
      " (1, 3, 999, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)");
  // A session without `elapsed` whose last event's time is past 64 bits of
  // microseconds (SQL's sum turns real): it ends where the view says.
  db.exec(
      "INSERT INTO sessions (sid, id, root_sid, depth, status, source, first_received, last_received, time_base_us)"
      " VALUES ('late', 2, 'late', 0, 'incomplete', 'stream', 'x', 'x', 9223372036854770000)");
  db.exec("INSERT INTO event_store (session, seq, type, time_us, body) VALUES (2, 1, 1, 10000, ',\"evt\":\"4\"')");
  // Regions whose names are ids, or text the names table had no room for.
  db.exec(
      "INSERT INTO region_store (session, seq, thread, nesting, category, label, msg, repo, t_start, elapsed,"
      " parent_seq, leave_seq, thread_text, category_text, label_text) VALUES"
      " (1, 100, 1000, 1, 1001, 1000, 'm', 1, 0.5, 0.25, NULL, 101, NULL, NULL, NULL),"
      " (1, 102, NULL, 2, NULL, 9999, NULL, NULL, NULL, NULL, 100, NULL, 'th09', 'cat', 'label')");
  EXPECT_GT(expect_loader_matches_views(db), 30u);
}

}  // namespace
}  // namespace trace2d::test
