#include "model/tree_loader.hpp"

#include <simdjson.h>

#include <unordered_map>

#include "proto/utf8.hpp"

namespace trace2d::model {
namespace {

// The session itself and every SID below it. The range keeps the primary
// key index usable ('/' sorts just before '0'); the second test drops SIDs
// that merely share the prefix ("abc-x" for "abc").
constexpr std::string_view k_sessions_sql = R"sql(
SELECT id, sid, parent_sid, depth, cmd_name, hierarchy, argv, sid_pid, start_time, process_start_us,
       elapsed, exit_code, signo, status, cmd_mode, exe, error_count,
       time_base_us + (SELECT max(e.time_us) FROM event_store e WHERE e.session = sessions.id)
  FROM sessions
 WHERE sid >= ?1 AND sid < ?1 || '0'
   AND (sid = ?1 OR substr(sid, 1, length(?1) + 1) = ?1 || '/')
)sql";

constexpr std::string_view k_regions_sql = R"sql(
SELECT enter_seq, leave_seq, parent_region & 4294967295, thread, nesting, category, label, msg, repo,
       t_start, elapsed
  FROM regions WHERE sid = ?1
)sql";

// The thread a child_start came from is on its event row.
constexpr std::string_view k_children_sql = R"sql(
SELECT c.child_id, c.start_seq, th.text, c.child_class, c.hook_name, c.argv, c.use_shell, c.pid, c.code,
       c.ready, c.t_start, c.elapsed, c.child_sid
  FROM children c
  LEFT JOIN event_store e ON e.session = ?2 AND e.seq = c.start_seq
  LEFT JOIN names th ON th.id = e.thread
 WHERE c.sid = ?1
)sql";

// exec (type 18) and exec_result (type 19) events, in order, paired in
// load_execs(). Their times relative to the process start, as the threads
// view computes them.
constexpr std::string_view k_execs_sql = R"sql(
SELECT e.type, e.seq, th.text, e.obj,
       CASE WHEN e.time_us IS NULL OR s.process_start_us IS NULL THEN NULL
            ELSE (s.time_base_us + e.time_us - s.process_start_us) / 1e6 END
  FROM event_parts e
  JOIN sessions s ON s.id = e.session
  LEFT JOIN names th ON th.id = e.thread
 WHERE e.session = ?1 AND e.type IN (18, 19)
 ORDER BY e.seq
)sql";

constexpr std::string_view k_threads_sql = R"sql(
SELECT thread, start_seq, t_start, elapsed FROM threads WHERE sid = ?1
)sql";

// The time of an error is on its event row, relative to the session's time base.
constexpr std::string_view k_errors_sql = R"sql(
SELECT x.seq, x.thread, x.msg, x.fmt, s.time_base_us + e.time_us
  FROM errors x
  JOIN sessions s ON s.sid = x.sid
  LEFT JOIN event_store e ON e.session = s.id AND e.seq = x.seq
 WHERE x.sid = ?1
 ORDER BY x.seq
)sql";

// Every value as JSON text, so an export can embed it as it is.
constexpr std::string_view k_annotations_sql = R"sql(
SELECT 'data', thread, category, key, CASE value_type WHEN 'string' THEN json_quote(value) ELSE value END,
       t_abs, seq, value
  FROM data WHERE sid = ?1
UNION ALL
SELECT 'counter', thread, category, name, count, NULL, seq, NULL FROM counters WHERE sid = ?1
UNION ALL
SELECT 'timer', thread, category, name,
       json_object('intervals', intervals, 't_total', t_total, 't_min', t_min, 't_max', t_max), NULL, seq, NULL
  FROM timers WHERE sid = ?1
ORDER BY 7
)sql";

constexpr std::string_view k_params_sql = R"sql(
SELECT param, value FROM params WHERE sid = ?1 ORDER BY seq
)sql";

std::string text_or_empty(const db::Statement& stmt, int column) {
  return stmt.column_is_null(column) ? std::string() : std::string(stmt.column_text(column));
}

ProcessInfo read_process(const db::Statement& stmt) {
  ProcessInfo info;
  info.session_id = stmt.column_int(0);
  info.sid = std::string(stmt.column_text(1));
  info.parent_sid = stmt.column_optional_text(2);
  info.depth = stmt.column_int(3);
  info.cmd_name = text_or_empty(stmt, 4);
  info.hierarchy = text_or_empty(stmt, 5);
  if (!stmt.column_is_null(6)) {
    info.argv = parse_string_array(stmt.column_text(6));
  }
  info.pid = stmt.column_optional_int(7);
  info.start_time = stmt.column_optional_text(8);
  info.start_us = stmt.column_optional_int(9);
  info.elapsed = stmt.column_optional_double(10);
  info.exit_code = stmt.column_optional_int(11);
  info.signo = stmt.column_optional_int(12);
  info.status = text_or_empty(stmt, 13);
  info.cmd_mode = text_or_empty(stmt, 14);
  info.version = text_or_empty(stmt, 15);
  info.error_count = stmt.column_optional_int(16).value_or(0);
  info.last_event_us = stmt.column_optional_int(17);
  return info;
}

void load_regions(db::Statement& stmt, ProcessRows& rows) {
  stmt.reset();
  stmt.bind_text(1, rows.info.sid);
  while (stmt.step()) {
    RegionInfo& r = rows.regions.emplace_back();
    r.seq = stmt.column_int(0);
    r.leave_seq = stmt.column_optional_int(1);
    r.parent_seq = stmt.column_optional_int(2);
    r.thread = text_or_empty(stmt, 3);
    r.nesting = stmt.column_optional_int(4);
    r.category = text_or_empty(stmt, 5);
    r.label = text_or_empty(stmt, 6);
    r.msg = text_or_empty(stmt, 7);
    r.repo = stmt.column_optional_int(8);
    r.t_start = stmt.column_optional_double(9);
    r.elapsed = stmt.column_optional_double(10);
  }
}

void load_children(db::Statement& stmt, ProcessRows& rows) {
  stmt.reset();
  stmt.bind_text(1, rows.info.sid);
  stmt.bind_int(2, rows.info.session_id);
  while (stmt.step()) {
    ChildInfo& c = rows.children.emplace_back();
    c.child_id = stmt.column_int(0);
    c.start_seq = stmt.column_optional_int(1);
    c.thread = stmt.column_is_null(2) ? std::string("main") : std::string(stmt.column_text(2));
    c.child_class = text_or_empty(stmt, 3);
    c.hook_name = text_or_empty(stmt, 4);
    if (!stmt.column_is_null(5)) {
      c.argv = parse_string_array(stmt.column_text(5));
    }
    c.use_shell = stmt.column_optional_int(6).value_or(0) != 0;
    c.pid = stmt.column_optional_int(7);
    c.code = stmt.column_optional_int(8);
    c.ready = text_or_empty(stmt, 9);
    c.t_start = stmt.column_optional_double(10);
    c.elapsed = stmt.column_optional_double(11);
    c.child_sid = stmt.column_optional_text(12);
  }
}

void load_threads(db::Statement& stmt, ProcessRows& rows) {
  stmt.reset();
  stmt.bind_text(1, rows.info.sid);
  while (stmt.step()) {
    ThreadInfo& t = rows.threads.emplace_back();
    t.name = text_or_empty(stmt, 0);
    t.start_seq = stmt.column_optional_int(1);
    t.t_start = stmt.column_optional_double(2);
    t.elapsed = stmt.column_optional_double(3);
  }
}

// An exec_result belongs to the latest exec before it with its exec_id
// that has none yet; one without such an exec is left out (it says
// nothing of a process it could be drawn against). By exec_id through a
// map: a hostile session's million unmatched results cost no more than
// as many lookups.
void load_execs(db::Statement& stmt, ProcessRows& rows) {
  simdjson::dom::parser parser;
  std::unordered_map<std::int64_t, std::vector<std::size_t>> unanswered;  // exec_id -> indexes in rows.execs
  stmt.reset();
  stmt.bind_int(1, rows.info.session_id);
  while (stmt.step()) {
    simdjson::dom::object obj;
    const std::string_view json = stmt.column_text(3);
    if (parser.parse(json.data(), json.size()).get(obj) != simdjson::SUCCESS) {
      continue;  // not an object (a producer's odd line, stored whole): nothing to read
    }
    std::int64_t exec_id = 0;
    if (obj["exec_id"].get(exec_id) != simdjson::SUCCESS) {
      continue;
    }
    if (stmt.column_int(0) == 18) {
      ExecInfo& e = rows.execs.emplace_back();
      e.exec_id = exec_id;
      e.seq = stmt.column_int(1);
      e.thread = stmt.column_is_null(2) ? std::string("main") : std::string(stmt.column_text(2));
      std::string_view exe;
      if (obj["exe"].get(exe) == simdjson::SUCCESS) {
        e.exe = std::string(exe);
      }
      simdjson::dom::element argv;
      if (obj["argv"].get(argv) == simdjson::SUCCESS) {
        e.argv = parse_string_array(simdjson::minify(argv));
      }
      e.t_start = stmt.column_optional_double(4);
      unanswered[exec_id].push_back(rows.execs.size() - 1);
      continue;
    }
    const auto waiting = unanswered.find(exec_id);
    if (waiting == unanswered.end() || waiting->second.empty()) {
      continue;
    }
    ExecInfo& e = rows.execs[waiting->second.back()];
    waiting->second.pop_back();
    std::int64_t code = -1;
    e.code = obj["code"].get(code) == simdjson::SUCCESS ? code : -1;
    e.result_t = stmt.column_optional_double(4);
  }
}

// The value if it is JSON, else the text as a JSON string: a counter's
// "count" is whatever the line held ("oops" for one), and the Chrome trace
// embeds the value as it is.
std::string as_json(std::string_view text, simdjson::dom::parser& parser) {
  simdjson::dom::element element;
  if (parser.parse(text.data(), text.size()).get(element) == simdjson::SUCCESS) {
    return std::string(text);
  }
  std::string quoted;
  proto::append_json_string(quoted, text);
  return quoted;
}

void load_annotations(db::Statement& stmt, ProcessRows& rows) {
  simdjson::dom::parser parser;
  stmt.reset();
  stmt.bind_text(1, rows.info.sid);
  while (stmt.step()) {
    Annotation& a = rows.info.annotations.emplace_back();
    a.kind = std::string(stmt.column_text(0));
    a.thread = text_or_empty(stmt, 1);
    a.category = text_or_empty(stmt, 2);
    a.name = text_or_empty(stmt, 3);
    a.json_value = stmt.column_is_null(4) ? std::string("null") : as_json(stmt.column_text(4), parser);
    a.t_abs = stmt.column_optional_double(5);
    a.text = text_or_empty(stmt, 7);
  }
}

void load_params(db::Statement& stmt, ProcessRows& rows) {
  stmt.reset();
  stmt.bind_text(1, rows.info.sid);
  while (stmt.step()) {
    rows.info.params.push_back(ParamInfo{text_or_empty(stmt, 0), text_or_empty(stmt, 1)});
  }
}

void load_errors(db::Statement& stmt, ProcessRows& rows) {
  stmt.reset();
  stmt.bind_text(1, rows.info.sid);
  while (stmt.step()) {
    ErrorInfo& e = rows.info.errors.emplace_back();
    e.seq = stmt.column_int(0);
    e.thread = text_or_empty(stmt, 1);
    e.msg = text_or_empty(stmt, 2);
    e.fmt = text_or_empty(stmt, 3);
    e.time_us = stmt.column_optional_int(4);
  }
}

}  // namespace

std::string normalise_root(std::string root) {
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  return root;
}

std::vector<std::string> parse_string_array(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::array array;
  if (parser.parse(json.data(), json.size()).get(array) != simdjson::SUCCESS) {
    return {std::string(json)};
  }
  std::vector<std::string> out;
  for (simdjson::dom::element element : array) {
    std::string_view text;
    if (element.get(text) == simdjson::SUCCESS) {
      out.emplace_back(text);
    } else {
      out.emplace_back(simdjson::minify(element));
    }
  }
  return out;
}

std::vector<ProcessRows> load_process_rows(db::Database& db, const std::string& root,
                                           const LoadOptions& options) {
  std::vector<ProcessRows> all;
  {
    db::Statement sessions = db.prepare(k_sessions_sql);
    sessions.bind_text(1, root);
    while (sessions.step()) {
      all.push_back(ProcessRows{read_process(sessions), {}, {}, {}, {}});
    }
  }
  if (all.empty()) {
    return all;
  }
  db::Statement regions = db.prepare(k_regions_sql);
  db::Statement children = db.prepare(k_children_sql);
  db::Statement threads = db.prepare(k_threads_sql);
  db::Statement execs = db.prepare(k_execs_sql);
  std::optional<db::Statement> annotations;
  if (options.annotations) {
    annotations.emplace(db.prepare(k_annotations_sql));
  }
  std::optional<db::Statement> errors;
  if (options.errors) {
    errors.emplace(db.prepare(k_errors_sql));
  }
  std::optional<db::Statement> params;
  if (options.params) {
    params.emplace(db.prepare(k_params_sql));
  }
  for (ProcessRows& rows : all) {
    load_regions(regions, rows);
    load_children(children, rows);
    load_threads(threads, rows);
    load_execs(execs, rows);
    if (annotations) {
      load_annotations(*annotations, rows);
    }
    if (errors) {
      load_errors(*errors, rows);
    }
    if (params) {
      load_params(*params, rows);
    }
  }
  return all;
}

}  // namespace trace2d::model
