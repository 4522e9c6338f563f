#include "model/tree_loader.hpp"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>

#include "db/event_codec.hpp"
#include "db/event_types.hpp"
#include "proto/utf8.hpp"

namespace trace2d::model {
namespace {

constexpr std::string_view k_session_columns =
    "SELECT id, sid, parent_sid, depth, cmd_name, hierarchy, argv, sid_pid, start_time, process_start_us,"
    " elapsed, exit_code, signo, status, cmd_mode, exe, error_count, time_base_us, coalesce(tree_sid, root_sid),"
    " peer_uid, lines_lost, ";
constexpr std::string_view k_last_event =
    "time_base_us + (SELECT max(e.time_us) FROM event_store e WHERE e.session = sessions.id)";

// (A row that trace2d did not write may lack tree_sid: its root_sid stands
// for it, as the migration that added the column set it.)
//
// The session itself and every SID below it, of one tree and owner
// (?2, ?3: the session's tree_sid and peer_uid). The range keeps the
// primary key index usable ('/' sorts just before '0') and is only where
// rows are looked for; the second test drops SIDs that merely share the
// prefix ("abc-x" for "abc"); tree_sid and peer_uid say which of them are
// the tree: another uid's sessions under the SID, and sessions re-rooted
// below it, are trees of their own.
constexpr std::string_view k_tree_where = R"sql(
  FROM sessions
 WHERE sid >= ?1 AND sid < ?1 || '0'
   AND (sid = ?1 OR substr(sid, 1, length(?1) + 1) = ?1 || '/')
   AND coalesce(tree_sid, root_sid) = ?2 AND peer_uid IS ?3
)sql";

// Under a prefix that is no session ("ci-job 42"): the sessions whose tree
// begins at or above it (not re-rooted below it), of one owner (?3).
constexpr std::string_view k_prefix_where = R"sql(
  FROM sessions
 WHERE sid >= ?1 AND sid < ?1 || '0'
   AND substr(sid, 1, length(?1) + 1) = ?1 || '/'
   AND length(coalesce(tree_sid, root_sid)) <= length(?1) AND peer_uid IS ?3
)sql";

// Who has such sessions under a prefix: a tree is one owner's. At most a
// few are reported; reading the owners costs what the range holds.
constexpr std::string_view k_prefix_owners_sql = R"sql(
SELECT DISTINCT peer_uid
  FROM sessions
 WHERE sid >= ?1 AND sid < ?1 || '0'
   AND substr(sid, 1, length(?1) + 1) = ?1 || '/'
   AND length(coalesce(tree_sid, root_sid)) <= length(?1)
 LIMIT 8
)sql";

// An ancestor's last event is not needed (it sends no span now), and
// finding it reads every event of the session; a session loaded in full
// finds it with k_last_event_sql, reading only the events' times.
enum class LastEvent : std::uint8_t { wanted, not_wanted };

std::string sessions_sql(std::string_view where, LastEvent last_event) {
  std::string sql(k_session_columns);
  sql += last_event == LastEvent::wanted ? k_last_event : std::string_view("NULL");
  sql += where;
  return sql;
}

constexpr std::string_view k_regions_sql = R"sql(
SELECT enter_seq, leave_seq, parent_region & 4294967295, thread, nesting, category, label, msg, repo,
       t_start, elapsed, sid
  FROM regions WHERE sid {sid}
)sql";

// The thread a child_start came from is on its event row. (An ancestor's
// child, by SID; the sessions loaded in full read k_child_rows_sql.)
constexpr std::string_view k_children_sql = R"sql(
SELECT c.child_id, c.start_seq, th.text, c.child_class, c.hook_name, c.argv, c.use_shell, c.pid, c.code,
       c.ready, c.t_start, c.elapsed, c.child_sid, c.sid
  FROM children c
  LEFT JOIN event_store e ON e.session = {session} AND e.seq = c.start_seq
  LEFT JOIN names th ON th.id = e.thread
 WHERE c.sid {sid}
)sql";

// An ancestor's exec and exec_result events, in order,
// paired in pair_exec_results(), and its threads (the sessions sent read
// both from k_events_sql). Their times relative to the process start, as the
// threads view computes them.
constexpr std::string_view k_execs_sql = R"sql(
SELECT e.type, e.seq, th.text, e.obj,
       CASE WHEN e.time_us IS NULL OR s.process_start_us IS NULL THEN NULL
            ELSE (s.time_base_us + e.time_us - s.process_start_us) / 1e6 END,
       s.sid
  FROM sessions s
  JOIN event_parts e ON e.session = s.id
  LEFT JOIN names th ON th.id = e.thread
 WHERE s.sid {sid} AND {exec_types}
 ORDER BY e.session, e.seq
)sql";

constexpr std::string_view k_threads_sql = R"sql(
SELECT thread, start_seq, t_start, elapsed, sid FROM threads WHERE sid {sid}
)sql";

// The regions of the sessions loaded in full, from region_store: the
// regions view looks up the session and three names for every row; here
// the names come from a cache (FullLoader::name). As the view gives them:
// a name the names table had no room for is in the row's *_text column.
// By session id ({id}), which the session's row gave: through the SID each
// session cost two more seeks (its SID's index, its row) in every query.
constexpr std::string_view k_region_rows_sql = R"sql(
SELECT r.seq, r.leave_seq, r.parent_seq & 4294967295, r.thread, r.nesting, r.category, r.label, r.msg, r.repo,
       r.t_start, r.elapsed, r.thread_text, r.category_text, r.label_text, r.session
  FROM region_store r
 WHERE r.session {id} AND r.seq < ?2
 ORDER BY r.session, r.seq
)sql";

// The children of the sessions loaded in full, by session id, from
// child_store: the children view found each row's session again by its SID
// (for the thread's event row) and its thread's name by a lookup, which
// come here from the row and FullLoader's name cache. child_sid is the
// view's expression, as it is (docs/schema.md, `children`).
constexpr std::string_view k_child_rows_sql = R"sql(
SELECT c.child_id, c.start_seq, e.thread, c.child_class, c.hook_name, c.argv, c.use_shell, c.pid, c.code,
       c.ready, c.t_start, c.elapsed,
       COALESCE(
         CASE WHEN c.pid > 0 THEN
           (SELECT k.sid FROM sessions k
             WHERE k.parent_sid = s.sid AND k.sid_pid = c.pid AND k.peer_uid IS s.peer_uid) END,
         (SELECT k.sid FROM sessions k
           WHERE k.parent_sid = s.sid AND k.argv_key = c.argv_key AND k.peer_uid IS s.peer_uid
             AND (c.start_us IS NULL OR k.process_start_us >= c.start_us)
             AND (c.end_us IS NULL OR k.process_start_us <= c.end_us)
           ORDER BY k.process_start_us LIMIT 1)),
       c.session
  FROM child_store c
  JOIN sessions s ON s.id = c.session
  LEFT JOIN event_store e ON e.session = c.session AND e.seq = c.start_seq
 WHERE c.session {id} AND coalesce(c.start_seq, c.end_seq, -1) < ?2
 ORDER BY c.session, c.child_id
)sql";

// The kinds of event that threads, execs, errors, params, data, timers and
// counters come from.
constexpr std::array k_scanned_kinds = {
    proto::EventKind::error,       proto::EventKind::cmd_ancestry, proto::EventKind::alias,
    proto::EventKind::thread_start, proto::EventKind::thread_exit, proto::EventKind::exec,
    proto::EventKind::exec_result, proto::EventKind::def_param,    proto::EventKind::def_repo,
    proto::EventKind::data,        proto::EventKind::data_json,    proto::EventKind::timer,
    proto::EventKind::th_timer,    proto::EventKind::counter,      proto::EventKind::th_counter,
    proto::EventKind::printf};
constexpr std::array k_exec_kinds = {proto::EventKind::exec, proto::EventKind::exec_result};

// Those events, read once (the views each read every event of the session
// again) and their text parsed once with simdjson rather than by the views'
// json_extract() calls. Their threads' names come from FullLoader's cache,
// not a lookup per row.
constexpr std::string_view k_events_sql = R"sql(
SELECT e.seq, e.type, e.time_us, e.body, e.thread, {leading_columns}, e.session
  FROM event_store e
 WHERE e.session {id} AND e.seq < ?2
   AND {scanned_types}
 ORDER BY e.session, e.seq
)sql";

// The time of each session's last event (relative to its time base), for
// those without `elapsed`.
constexpr std::string_view k_last_event_sql = R"sql(
SELECT max(e.time_us), e.session
  FROM event_store e
 WHERE e.session {id}
 GROUP BY e.session
)sql";

// The queries above read one session ({sid}: = ?1, its SID; {id}: = ?1,
// its id; {session}: ?2, its id), or, for the exporter, every session of a
// JSON array of SIDs or ids at once (?1): one execution for a round's
// sessions instead of one each. FullLoader's (by id) give the row's session
// id in their last column, and read only what began before event ?2 (the
// exporter's slice of a huge session, ExportSession::before_seq; else all).
enum class Sessions : std::uint8_t { one, many };

std::string query(std::string_view text, Sessions sessions) {
  std::string sql(text);
  const auto replace = [&sql](std::string_view token, std::string_view by) {
    for (auto at = sql.find(token); at != std::string::npos; at = sql.find(token, at + by.size())) {
      sql.replace(at, token.size(), by);
    }
  };
  replace("{sid}", sessions == Sessions::one ? "= ?1" : "IN (SELECT value FROM json_each(?1))");
  replace("{id}", sessions == Sessions::one ? "= ?1" : "IN (SELECT value FROM json_each(?1))");
  replace("{exec_types}", db::stored_type_condition("e.type", k_exec_kinds));
  replace("{scanned_types}", db::stored_type_condition("e.type", k_scanned_kinds));
  replace("{leading_columns}", db::leading_column_list("e."));
  replace("{session}", sessions == Sessions::one ? "?2" : "(SELECT k.id FROM sessions k WHERE k.sid = c.sid)");
  return sql;
}

// An argv as parse_string_array() gives it, from a parsed value: the
// strings of an array (other elements as JSON text), or one element holding
// the text of anything else.
std::vector<std::string> string_array(simdjson::dom::element value) {
  simdjson::dom::array array;
  if (value.get(array) != simdjson::SUCCESS) {
    return {std::string(simdjson::minify(value))};
  }
  std::vector<std::string> out;
  out.reserve(array.size());
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
  info.time_base_us = stmt.column_optional_int(17);
  info.tree_sid = text_or_empty(stmt, 18);
  info.owner = Owner{stmt.column_optional_int(19)};
  info.lines_lost = stmt.column_optional_int(20).value_or(0);
  info.last_event_us = stmt.column_optional_int(21);
  return info;
}

// One row of each query into its session's rows.
void read_region(const db::Statement& stmt, ProcessRows& rows) {
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

// All but the thread (column 2: its name, or its names.id for
// k_child_rows_sql), which the caller sets.
ChildInfo& read_child_columns(const db::Statement& stmt, ProcessRows& rows) {
  ChildInfo& c = rows.children.emplace_back();
  c.child_id = stmt.column_int(0);
  c.start_seq = stmt.column_optional_int(1);
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
  return c;
}

void read_child(const db::Statement& stmt, ProcessRows& rows) {
  ChildInfo& c = read_child_columns(stmt, rows);
  c.thread = stmt.column_is_null(2) ? std::string("main") : std::string(stmt.column_text(2));
}

void read_thread(const db::Statement& stmt, ProcessRows& rows) {
  ThreadInfo& t = rows.threads.emplace_back();
  t.name = text_or_empty(stmt, 0);
  t.start_seq = stmt.column_optional_int(1);
  t.t_start = stmt.column_optional_double(2);
  t.elapsed = stmt.column_optional_double(3);
}

// An exec_result as read, before it is paired with its exec.
struct ExecResult {
  std::int64_t exec_id = 0;
  std::int64_t seq = 0;
  std::int64_t code = -1;
  std::optional<double> t;
};

// exec events go to rows.execs, exec_results to `results`, both in event
// order; events that are not objects with an exec_id say nothing of a
// process and are left out.
void add_exec_event(std::int64_t type, std::int64_t seq, std::optional<std::string_view> thread,
                    const simdjson::dom::object& obj, std::optional<double> t, ProcessRows& rows,
                    std::vector<ExecResult>& results) {
  std::int64_t exec_id = 0;
  if (obj["exec_id"].get(exec_id) != simdjson::SUCCESS) {
    return;
  }
  if (type != 18) {
    std::int64_t code = -1;
    results.push_back(ExecResult{exec_id, seq, obj["code"].get(code) == simdjson::SUCCESS ? code : -1, t});
    return;
  }
  ExecInfo& e = rows.execs.emplace_back();
  e.exec_id = exec_id;
  e.seq = seq;
  e.thread = thread ? std::string(*thread) : std::string("main");
  std::string_view exe;
  if (obj["exe"].get(exe) == simdjson::SUCCESS) {
    e.exe = std::string(exe);
  }
  simdjson::dom::element argv;
  if (obj["argv"].get(argv) == simdjson::SUCCESS) {
    e.argv = string_array(argv);
  }
  e.t_start = t;
}

void read_exec_event(const db::Statement& stmt, ProcessRows& rows, std::vector<ExecResult>& results,
                     simdjson::dom::parser& parser) {
  simdjson::dom::object obj;
  const std::string_view json = stmt.column_text(3);
  if (parser.parse(json.data(), json.size()).get(obj) != simdjson::SUCCESS) {
    return;  // not an object (a producer's odd line, stored whole): nothing to read
  }
  add_exec_event(stmt.column_int(0), stmt.column_int(1),
                 stmt.column_is_null(2) ? std::nullopt : std::optional(stmt.column_text(2)), obj,
                 stmt.column_optional_double(4), rows, results);
}

// An exec_result belongs to the latest exec before it with its exec_id
// that has none yet; one without such an exec is left out (it says nothing
// of a process it could be drawn against). By exec_id through a map: a
// hostile session's million unmatched results cost no more than as many
// lookups.
void pair_exec_results(ProcessRows& rows, const std::vector<ExecResult>& results) {
  std::unordered_map<std::int64_t, std::vector<std::size_t>> unanswered;  // exec_id -> indexes in rows.execs
  std::size_t next_exec = 0;
  for (const ExecResult& result : results) {
    for (; next_exec < rows.execs.size() && rows.execs[next_exec].seq < result.seq; ++next_exec) {
      unanswered[rows.execs[next_exec].exec_id].push_back(next_exec);
    }
    const auto waiting = unanswered.find(result.exec_id);
    if (waiting == unanswered.end() || waiting->second.empty()) {
      continue;
    }
    ExecInfo& e = rows.execs[waiting->second.back()];
    waiting->second.pop_back();
    e.code = result.code;
    e.result_t = result.t;
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

// A member of an event as the views' json_extract() gives it to SQL
// (SQLite 3.40): true and false are the integers 1 and 0, an integer too
// large for 64 bits is a real, arrays and objects are their JSON text, and
// a missing member or null is NULL. The loader reads events with simdjson
// but must give what the documented views give.
struct SqlValue {
  enum class Kind : std::uint8_t { null, integer, real, text, json };
  Kind kind = Kind::null;
  std::int64_t integer = 0;
  double real = 0;
  std::string_view text;  // the string, unescaped (valid while its event is parsed)
  std::string json;       // an array's or object's text

  [[nodiscard]] std::string_view str() const { return kind == Kind::json ? std::string_view(json) : text; }
};

SqlValue sql_value(simdjson::dom::element element) {
  SqlValue v;
  switch (element.type()) {
    case simdjson::dom::element_type::STRING:
      v.kind = SqlValue::Kind::text;
      v.text = element.get_string().value_unsafe();
      break;
    case simdjson::dom::element_type::INT64:
      v.kind = SqlValue::Kind::integer;
      v.integer = element.get_int64().value_unsafe();
      break;
    case simdjson::dom::element_type::UINT64:
      v.kind = SqlValue::Kind::real;
      v.real = static_cast<double>(element.get_uint64().value_unsafe());
      break;
    case simdjson::dom::element_type::DOUBLE:
      v.kind = SqlValue::Kind::real;
      v.real = element.get_double().value_unsafe();
      break;
    case simdjson::dom::element_type::BOOL:
      v.kind = SqlValue::Kind::integer;
      v.integer = element.get_bool().value_unsafe() ? 1 : 0;
      break;
    case simdjson::dom::element_type::NULL_VALUE:
      break;
    case simdjson::dom::element_type::ARRAY:
    case simdjson::dom::element_type::OBJECT:
      v.kind = SqlValue::Kind::json;
      v.json = simdjson::minify(element);
      break;
  }
  return v;
}

SqlValue member(const simdjson::dom::object& obj, std::string_view key) {
  simdjson::dom::element element;
  if (obj[key].get(element) != simdjson::SUCCESS) {
    return {};
  }
  return sql_value(element);
}

// An integer member of an event (the obj has the members kept in columns
// written back), nullopt when it has none or another type.
std::optional<std::int64_t> integer_member(const simdjson::dom::object& obj, std::string_view key) {
  const SqlValue v = member(obj, key);
  return v.kind == SqlValue::Kind::integer ? std::optional<std::int64_t>(v.integer) : std::nullopt;
}

void append_integer(std::string& out, std::int64_t n) {
  std::array<char, 24> digits{};
  out.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), n).ptr);
}

// A real as SQLite turns it into text (sqlite3_column_text, json_quote).
std::string real_text(double value) {
  std::array<char, 64> buffer{};
  sqlite3_snprintf(static_cast<int>(buffer.size()), buffer.data(), "%!.15g", value);
  return buffer.data();
}

// sqlite3_column_text() of the value; nullopt for NULL.
std::optional<std::string> as_text(const SqlValue& v) {
  switch (v.kind) {
    case SqlValue::Kind::null:
      return std::nullopt;
    case SqlValue::Kind::integer:
      return std::to_string(v.integer);
    case SqlValue::Kind::real:
      return real_text(v.real);
    case SqlValue::Kind::text:
    case SqlValue::Kind::json:
      return std::string(v.str());
  }
  return std::nullopt;
}

std::string text_or_empty(const SqlValue& v) { return as_text(v).value_or(std::string()); }

// sqlite3_column_double() of the value (text: its leading number, or 0).
std::optional<double> as_double(const SqlValue& v) {
  switch (v.kind) {
    case SqlValue::Kind::null:
      return std::nullopt;
    case SqlValue::Kind::integer:
      return static_cast<double>(v.integer);
    case SqlValue::Kind::real:
      return v.real;
    case SqlValue::Kind::text:
    case SqlValue::Kind::json:
      return std::strtod(std::string(v.str()).c_str(), nullptr);
  }
  return std::nullopt;
}

// SQLite's json_quote() (and json_object()'s members): a string quoted its
// way (\b \t \n \f \r and \u00xx for other control characters; bytes as
// they are), JSON text as it is.
std::string sql_json(const SqlValue& v) {
  switch (v.kind) {
    case SqlValue::Kind::null:
      return "null";
    case SqlValue::Kind::integer:
      return std::to_string(v.integer);
    case SqlValue::Kind::real:
      return real_text(v.real);
    case SqlValue::Kind::json:
      return v.json;
    case SqlValue::Kind::text:
      break;
  }
  std::string out;
  db::append_sqlite_json_quoted(out, v.text);
  return out;
}

// The event types the scan reads (k_scanned_kinds), by their stored ids.
using proto::EventKind;
constexpr std::int64_t k_error = db::stored_type(EventKind::error);
constexpr std::int64_t k_cmd_ancestry = db::stored_type(EventKind::cmd_ancestry);
constexpr std::int64_t k_alias = db::stored_type(EventKind::alias);
constexpr std::int64_t k_thread_start = db::stored_type(EventKind::thread_start);
constexpr std::int64_t k_thread_exit = db::stored_type(EventKind::thread_exit);
constexpr std::int64_t k_exec = db::stored_type(EventKind::exec);
constexpr std::int64_t k_exec_result = db::stored_type(EventKind::exec_result);
constexpr std::int64_t k_def_param = db::stored_type(EventKind::def_param);
constexpr std::int64_t k_def_repo = db::stored_type(EventKind::def_repo);
constexpr std::int64_t k_data = db::stored_type(EventKind::data);
constexpr std::int64_t k_data_json = db::stored_type(EventKind::data_json);
constexpr std::int64_t k_timer = db::stored_type(EventKind::timer);
constexpr std::int64_t k_th_timer = db::stored_type(EventKind::th_timer);
constexpr std::int64_t k_counter = db::stored_type(EventKind::counter);
constexpr std::int64_t k_th_counter = db::stored_type(EventKind::th_counter);
constexpr std::int64_t k_printf = db::stored_type(EventKind::printf);

// What the scan of one session's events gathers before it is complete.
struct EventScan {
  std::vector<ExecResult> exec_results;
  // thread_starts: their thread's id; and the first thread_exit's t_rel of each thread.
  std::vector<std::optional<std::int64_t>> thread_ids;
  std::unordered_map<std::int64_t, std::optional<double>> thread_exits;
};

// An annotation's members every kind has: its thread, and the category and
// name (`name_key`: "key" for data, "name" for counters and timers).
Annotation& add_annotation(std::vector<Annotation>& annotations, const char* kind,
                           std::optional<std::string_view> thread, const simdjson::dom::object& obj,
                           std::string_view name_key) {
  Annotation& a = annotations.emplace_back();
  a.kind = kind;
  a.thread = thread ? std::string(*thread) : std::string();
  a.category = text_or_empty(member(obj, "category"));
  a.name = text_or_empty(member(obj, name_key));
  return a;
}

// data and data_json as the data view and the annotations query gave them:
// `value_type` 'json' for an array or object (or a data_json's value that
// is not a string), 'integer', else 'string', which is JSON-quoted.
void add_data(std::int64_t type, const simdjson::dom::object& obj, std::optional<std::string_view> thread,
              std::vector<Annotation>& annotations, simdjson::dom::parser& value_parser) {
  Annotation& a = add_annotation(annotations, "data", thread, obj, "key");
  const SqlValue value = member(obj, "value");
  const bool json = value.kind == SqlValue::Kind::json ||
                    (type == k_data_json && value.kind != SqlValue::Kind::text && value.kind != SqlValue::Kind::null);
  if (json) {
    // json(json_extract(...)): the value's text (a data_json's true is 1).
    const std::string text = text_or_empty(value);
    a.json_value = as_json(text, value_parser);
    a.text = text;
  } else if (value.kind == SqlValue::Kind::integer) {
    a.json_value = as_json(std::to_string(value.integer), value_parser);
    a.text = std::to_string(value.integer);
  } else {
    a.json_value = as_json(sql_json(value), value_parser);
    a.text = text_or_empty(value);
  }
  a.t_abs = as_double(member(obj, "t_abs"));
}

// What a session needs in full: its regions, children and threads, and
// what `options` ask for; of one session, or of many in one execution of
// each query (Sessions::many).
class FullLoader {
 public:
  FullLoader(db::Database& db, const LoadOptions& options, Sessions sessions = Sessions::one)
      : m_sessions(sessions),
        m_options(options),
        m_regions(db.prepare(query(k_region_rows_sql, sessions))),
        m_children(db.prepare(query(k_child_rows_sql, sessions))),
        m_events(db.prepare(query(k_events_sql, sessions))),
        m_last_event(db.prepare(query(k_last_event_sql, sessions))),
        m_name(db.prepare("SELECT text FROM names WHERE id = ?1")) {}
  FullLoader(const FullLoader&) = delete;  // m_name_texts refers to it
  FullLoader& operator=(const FullLoader&) = delete;

  void load(ProcessRows& rows) {
    std::vector<ProcessRows*> one{&rows};
    load(one);
  }

  // Sessions::many: all of `rows` at once; Sessions::one: one after the other.
  // Of each, only its regions, children and events that began before event
  // `before_seq` (the exporter's slice of a huge session).
  void load(const std::vector<ProcessRows*>& rows,
            std::int64_t before_seq = std::numeric_limits<std::int64_t>::max()) {
    if (rows.empty()) {
      return;
    }
    m_before_seq = before_seq;
    // Names are few and repeat (threads, categories, labels); the cache
    // lives for one load, so a hostile sender's million labels do not stay.
    m_names.clear();
    // The rows by session id, sorted, for every statement of this load: a
    // hash map made for each statement cost a node a session, four times.
    m_by_id.clear();
    if (m_sessions == Sessions::many) {
      m_by_id.reserve(rows.size());
      for (ProcessRows* r : rows) {
        m_by_id.emplace_back(r->info.session_id, r);
      }
      std::stable_sort(m_by_id.begin(), m_by_id.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    run(m_regions, rows, [this](const db::Statement& s, ProcessRows& r) { read_region_row(s, r); });
    m_name.reset();
    run(m_children, rows, [this](const db::Statement& s, ProcessRows& r) {
      ChildInfo& c = read_child_columns(s, r);
      const std::optional<std::string>* thread = s.column_is_null(2) ? nullptr : &cached_name(s.column_int(2));
      c.thread = thread != nullptr && *thread ? **thread : std::string("main");
    });
    std::unordered_map<ProcessRows*, EventScan> scans;
    run(m_events, rows, [&](const db::Statement& s, ProcessRows& r) { read_event(s, r, scans[&r]); });
    m_name.reset();
    // Only a session that never said how long it ran ends at its last
    // event: finding it reads every event's row, most sessions need not.
    std::vector<ProcessRows*> unfinished;
    for (ProcessRows* r : rows) {
      r->info.last_event_us.reset();
      if (!r->info.elapsed) {
        unfinished.push_back(r);
      }
    }
    run(m_last_event, unfinished, [](const db::Statement& s, ProcessRows& r) {
      // time_base_us + max(time_us), as SQL added them: a sum past 64 bits
      // (a hostile time) is a real there, read back as the nearest integer.
      const std::optional<std::int64_t> last = s.column_optional_int(0);
      std::int64_t sum = 0;
      if (!last || !r.info.time_base_us) {
        r.info.last_event_us.reset();
      } else if (__builtin_add_overflow(*r.info.time_base_us, *last, &sum)) {
        r.info.last_event_us = *last > 0 ? std::numeric_limits<std::int64_t>::max()
                                         : std::numeric_limits<std::int64_t>::min();
      } else {
        r.info.last_event_us = sum;
      }
    });
    for (ProcessRows* r : rows) {
      finish(*r, scans[r]);
    }
    m_by_id.clear();  // its capacity kept; no pointer kept past the load
  }

 private:
  // Each statement names its sessions by id ({id}).
  // All but m_last_event read up to m_before_seq (?2).
  template <typename Read>
  void run(db::Statement& stmt, const std::vector<ProcessRows*>& rows, const Read& read) {
    const bool sliced = &stmt != &m_last_event;
    if (m_sessions == Sessions::one) {
      for (ProcessRows* r : rows) {
        stmt.reset();
        stmt.bind_int(1, r->info.session_id);
        if (sliced) {
          stmt.bind_int(2, m_before_seq);
        }
        while (stmt.step()) {
          read(stmt, *r);
        }
      }
      return;
    }
    std::string ids = "[";
    for (ProcessRows* r : rows) {
      if (ids.size() > 1) {
        ids += ',';
      }
      append_integer(ids, r->info.session_id);
    }
    ids += ']';
    stmt.reset();
    stmt.bind_text(1, ids);
    if (sliced) {
      stmt.bind_int(2, m_before_seq);
    }
    const int id_column = stmt.column_count() - 1;
    ProcessRows* last = nullptr;  // rows come session by session: most need no lookup
    while (stmt.step()) {
      const std::int64_t id = stmt.column_int(id_column);
      if (last == nullptr || last->info.session_id != id) {
        // The first of its id, as a map's emplace kept it.
        const auto found = std::lower_bound(m_by_id.begin(), m_by_id.end(), id,
                                            [](const auto& entry, std::int64_t key) { return entry.first < key; });
        last = found == m_by_id.end() || found->first != id ? nullptr : found->second;
      }
      if (last != nullptr) {
        read(stmt, *last);
      }
    }
    stmt.reset();
  }

  // The codec's names: the cache's.
  class CachedNameTexts final : public db::NameTexts {
   public:
    explicit CachedNameTexts(FullLoader& loader) : m_loader(loader) {}
    std::optional<std::string_view> text(std::int64_t id) override {
      const std::optional<std::string>& text = m_loader.cached_name(id);
      return text ? std::optional<std::string_view>(*text) : std::nullopt;
    }

   private:
    FullLoader& m_loader;
  };

  // names.text of an id, from the cache.
  const std::optional<std::string>& cached_name(std::int64_t id) {
    auto found = m_names.find(id);
    if (found == m_names.end()) {
      m_name.reset();
      m_name.bind_int(1, id);
      found = m_names.emplace(id, m_name.step() ? m_name.column_optional_text(0) : std::nullopt).first;
    }
    return found->second;
  }

  // names.text of an id, else `fallback` (the regions view's coalesce()).
  std::string name(const db::Statement& stmt, int id_column, int text_column) {
    if (!stmt.column_is_null(id_column)) {
      if (const std::optional<std::string>& text = cached_name(stmt.column_int(id_column))) {
        return *text;
      }
    }
    return text_or_empty(stmt, text_column);
  }

  // One row of k_region_rows_sql.
  void read_region_row(const db::Statement& stmt, ProcessRows& rows) {
    RegionInfo& r = rows.regions.emplace_back();
    r.seq = stmt.column_int(0);
    r.leave_seq = stmt.column_optional_int(1);
    r.parent_seq = stmt.column_optional_int(2);
    r.thread = name(stmt, 3, 11);
    r.nesting = stmt.column_optional_int(4);
    r.category = name(stmt, 5, 12);
    r.label = name(stmt, 6, 13);
    r.msg = text_or_empty(stmt, 7);
    r.repo = stmt.column_optional_int(8);
    r.t_start = stmt.column_optional_double(9);
    r.elapsed = stmt.column_optional_double(10);
  }

  // One row of k_events_sql.
  void read_event(const db::Statement& stmt, ProcessRows& rows, EventScan& scan) {
    const std::optional<std::int64_t> time_us = stmt.column_optional_int(2);
    const std::int64_t type = stmt.column_int(1);
    const std::int64_t seq = stmt.column_int(0);
    const std::optional<std::int64_t> thread_id = stmt.column_optional_int(4);
    // A thread_exit's thread is not read (it names the thread it ends).
    std::optional<std::string_view> thread;
    if (thread_id && type != k_thread_exit) {
      if (const std::optional<std::string>& text = cached_name(*thread_id)) {
        thread = *text;
      }
    }
    const std::optional<std::int64_t>& time_base = rows.info.time_base_us;
    const std::optional<std::int64_t>& process_start = rows.info.start_us;
    // Seconds since the process start, as the threads view computes them.
    std::optional<double> t;
    if (time_us && time_base && process_start) {
      t = static_cast<double>(*time_base + *time_us - *process_start) / 1e6;
    }
    if (type == k_thread_start) {  // nothing of its text is read
      ThreadInfo& info = rows.threads.emplace_back();
      info.name = thread ? std::string(*thread) : std::string();
      info.start_seq = seq;
      info.t_start = t;
      scan.thread_ids.push_back(thread_id);
      return;
    }
    const bool wanted = type == k_thread_exit || type == k_exec || type == k_exec_result ||
                        (type == k_error && m_options.errors) || (type == k_def_param && m_options.params) ||
                        (type >= k_data && type <= k_th_counter && m_options.annotations) ||
                        ((type == k_cmd_ancestry || type == k_alias || type == k_def_repo || type == k_printf) &&
                         m_options.details);
    if (!wanted) {
      return;
    }
    // The event_parts view's obj, as the codec rebuilds it (k_events_sql's
    // body, then the leading columns from column 5). A category's and a
    // label's names come from the cache: a lookup in SQL for each row cost
    // more than the rest of the row.
    const std::string_view body = stmt.column_text(3);
    m_obj.clear();
    m_obj.reserve(body.size() + 128 + simdjson::SIMDJSON_PADDING);  // parsed in place
    db::append_stored_event_object(m_obj, body, db::read_leading_columns(stmt, 5), m_name_texts);
    simdjson::dom::object obj;
    const bool parsed = m_parser.parse(m_obj).get(obj) == simdjson::SUCCESS;
    if (type == k_thread_exit) {  // a thread's first exit ends it
      if (thread_id && !scan.thread_exits.contains(*thread_id)) {
        scan.thread_exits.emplace(*thread_id, parsed ? as_double(member(obj, "t_rel")) : std::nullopt);
      }
      return;
    }
    if (!parsed) {
      return;  // not an object (a producer's odd line, stored whole): nothing to read
    }
    switch (type) {
      case k_exec:
      case k_exec_result:
        add_exec_event(type, seq, thread, obj, t, rows, scan.exec_results);
        break;
      case k_error: {
        ErrorInfo& e = rows.info.errors.emplace_back();
        e.seq = seq;
        e.thread = thread ? std::string(*thread) : std::string();
        e.msg = text_or_empty(member(obj, "msg"));
        e.fmt = text_or_empty(member(obj, "fmt"));
        if (time_us && time_base) {
          e.time_us = *time_base + *time_us;
        }
        break;
      }
      case k_def_param: {
        ParamInfo& param = rows.info.params.emplace_back(
            ParamInfo{text_or_empty(member(obj, "param")), text_or_empty(member(obj, "value")), std::nullopt});
        param.scope = as_text(member(obj, "scope"));
        break;
      }
      case k_cmd_ancestry:
        if (simdjson::dom::element ancestry; obj["ancestry"].get(ancestry) == simdjson::SUCCESS) {
          rows.info.ancestry = string_array(ancestry);
        }
        break;
      case k_alias:
        rows.info.alias = text_or_empty(member(obj, "alias"));
        if (simdjson::dom::element argv; obj["argv"].get(argv) == simdjson::SUCCESS) {
          rows.info.alias_argv = string_array(argv);
        }
        break;
      case k_def_repo:
        if (const std::optional<std::int64_t> repo = integer_member(obj, "repo")) {  // none: not a repository git named
          rows.info.repos.push_back(RepoInfo{*repo, text_or_empty(member(obj, "worktree"))});
        }
        break;
      case k_printf:
        rows.info.printf_messages.push_back(text_or_empty(member(obj, "msg")));
        break;
      case k_data:
      case k_data_json: {
        add_data(type, obj, thread, rows.info.annotations, m_value_parser);
        Annotation& a = rows.info.annotations.back();
        a.seq = seq;
        a.nesting = integer_member(obj, "nesting");
        break;
      }
      case k_counter:
      case k_th_counter: {
        Annotation& a = add_annotation(rows.info.annotations, "counter", thread, obj, "name");
        const std::optional<std::string> count = as_text(member(obj, "count"));
        a.json_value = count ? as_json(*count, m_value_parser) : std::string("null");
        a.seq = seq;
        a.per_thread = type == k_th_counter;
        break;
      }
      case k_timer:
      case k_th_timer: {
        Annotation& a = add_annotation(rows.info.annotations, "timer", thread, obj, "name");
        std::string value = "{";
        for (const std::string_view key : {"intervals", "t_total", "t_min", "t_max"}) {
          if (value.size() > 1) {
            value += ',';
          }
          value += '"';
          value += key;
          value += "\":";
          SqlValue member_value = member(obj, key);
          if (member_value.kind == SqlValue::Kind::json) {
            // Through the view an array is text to json_object(): quoted.
            member_value.kind = SqlValue::Kind::text;
            member_value.text = member_value.json;
          }
          a.timer_fields.push_back(sql_json(member_value));
          value += a.timer_fields.back();
        }
        value += '}';
        a.json_value = as_json(value, m_value_parser);
        a.seq = seq;
        a.per_thread = type == k_th_timer;
        break;
      }
      default:
        break;  // k_events_sql reads no other type
    }
  }

  void finish(ProcessRows& rows, EventScan& scan) {
    for (std::size_t i = 0; i < rows.threads.size() && i < scan.thread_ids.size(); ++i) {
      if (!scan.thread_ids[i]) {
        continue;
      }
      if (const auto exit = scan.thread_exits.find(*scan.thread_ids[i]); exit != scan.thread_exits.end()) {
        rows.threads[i].elapsed = exit->second;
      }
    }
    pair_exec_results(rows, scan.exec_results);
  }

  Sessions m_sessions;
  LoadOptions m_options;
  std::int64_t m_before_seq = std::numeric_limits<std::int64_t>::max();
  db::Statement m_regions;
  db::Statement m_children;
  db::Statement m_events;
  db::Statement m_last_event;
  db::Statement m_name;
  std::unordered_map<std::int64_t, std::optional<std::string>> m_names;
  CachedNameTexts m_name_texts{*this};
  std::vector<std::pair<std::int64_t, ProcessRows*>> m_by_id;  // Sessions::many: this load's rows, by id
  simdjson::dom::parser m_parser;
  simdjson::dom::parser m_value_parser;  // as_json() while an event is parsed in m_parser
  std::string m_obj;
};

// The child_starts of a session that may have run a given session: the
// ones with its pid (git ran it), and the latest ones started before it
// (through a shell, or a hook's git: model/session_placement.hpp). Both
// through an index (schema v11), at most 16 of each: only a session with
// more child_starts running at once than that could be placed otherwise
// than in a build of its whole tree.
constexpr std::string_view k_children_by_pid_sql =
    "SELECT child_id FROM child_store WHERE session = ?1 AND pid = ?2 LIMIT 16";
constexpr std::string_view k_children_before_sql =
    "SELECT child_id FROM child_store WHERE session = ?1 AND start_us <= ?2 ORDER BY start_us DESC LIMIT 16";

// The latest region of a thread that began before an event, and a thread's
// first region (where a thread without thread_start begins).
constexpr std::string_view k_region_before_sql =
    "SELECT enter_seq FROM regions WHERE sid = ?1 AND thread = ?2 AND enter_seq < ?3 ORDER BY enter_seq DESC LIMIT 1";
constexpr std::string_view k_first_region_sql =
    "SELECT enter_seq FROM regions WHERE sid = ?1 AND thread = ?2 ORDER BY enter_seq LIMIT 1";

// How far up a region's parents are followed: as deep as a tree is drawn
// (k_max_tree_depth), with room for the levels above them.
constexpr int k_max_region_walk = 4 * static_cast<int>(k_max_tree_depth);

}  // namespace

std::string normalise_root(std::string root) {
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  return root;
}

std::vector<std::string> parse_string_array(std::string_view json) {
  // One parser for the thread: argv is parsed for every session and child,
  // and a parser's first use allocates its buffers.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element value;
  if (parser.parse(json.data(), json.size()).get(value) != simdjson::SUCCESS || !value.is_array()) {
    return {std::string(json)};
  }
  return string_array(value);
}

SeveralOwnersError::SeveralOwnersError(const std::string& root, std::vector<Owner> owners)
    : std::runtime_error([&] {
        std::string text = "sessions of several owners are under '" + root + "' (";
        for (std::size_t i = 0; i < owners.size(); ++i) {
          text += i > 0 ? ", " : "";
          text += owners[i].uid ? "uid " + std::to_string(*owners[i].uid) : std::string("imported, no uid");
        }
        return text + "), and a tree is one owner's: name one of their SIDs, or the owner";
      }()),
      m_owners(std::move(owners)) {}

std::vector<ProcessRows> load_process_rows(db::Database& db, const std::string& root,
                                           const LoadOptions& options) {
  std::vector<ProcessRows> all;
  {
    // A session names its tree and owner. Under a prefix that is no
    // session, or that is another owner's session (sent after the owner
    // asked for had sessions under it), the tree is the owner's asked for,
    // or the only one's there.
    std::optional<std::string> tree_sid;
    Owner owner;
    db::Statement session = db.prepare("SELECT coalesce(tree_sid, root_sid), peer_uid FROM sessions WHERE sid = ?1");
    session.bind_text(1, root);
    if (session.step()) {
      tree_sid = text_or_empty(session, 0);
      owner = Owner{session.column_optional_int(1)};
    }
    session.reset();
    if (options.owner && (!tree_sid || *options.owner != owner)) {
      tree_sid.reset();
      owner = *options.owner;
    } else if (!tree_sid) {
      db::Statement owners = db.prepare(k_prefix_owners_sql);
      owners.bind_text(1, root);
      std::vector<Owner> found;
      while (owners.step()) {
        found.push_back(Owner{owners.column_optional_int(0)});
      }
      if (found.size() > 1) {
        throw SeveralOwnersError(root, std::move(found));
      }
      if (found.empty()) {
        return all;
      }
      owner = found.front();
    }
    // FullLoader finds their last event (k_last_event_sql).
    db::Statement sessions = db.prepare(sessions_sql(tree_sid ? k_tree_where : k_prefix_where, LastEvent::not_wanted));
    sessions.bind_text(1, root);
    if (tree_sid) {
      sessions.bind_text(2, *tree_sid);
    }
    sessions.bind(3, owner.uid);
    while (sessions.step()) {
      all.push_back(ProcessRows{read_process(sessions), {}, {}, {}, {}});
    }
  }
  if (all.empty()) {
    return all;
  }
  FullLoader loader(db, options);
  if (!options.max_events_per_session) {
    for (ProcessRows& rows : all) {
      loader.load(rows);
    }
    return all;
  }
  // Where each session is cut: its event past the bound, through the
  // primary key (reading the bound's keys, not the events).
  db::Statement cut = db.prepare("SELECT seq FROM event_store WHERE session = ?1 ORDER BY seq LIMIT 1 OFFSET ?2");
  db::Statement rest = db.prepare("SELECT count(*) FROM event_store WHERE session = ?1 AND seq >= ?2");
  for (ProcessRows& rows : all) {
    cut.reset();
    cut.bind_int(1, rows.info.session_id);
    cut.bind_int(2, std::max<std::int64_t>(1, *options.max_events_per_session));
    if (!cut.step()) {
      loader.load(rows);
      continue;
    }
    const std::int64_t before_seq = cut.column_int(0);
    cut.reset();
    rest.reset();
    rest.bind_int(1, rows.info.session_id);
    rest.bind_int(2, before_seq);
    rows.info.events_left_out = rest.step() ? rest.column_int(0) : 0;
    rest.reset();
    std::vector<ProcessRows*> one{&rows};
    loader.load(one, before_seq);
  }
  return all;
}

// load_export_rows(): the given sessions in full, and of the sessions above
// them only what places them, each ancestor once.
class ExportRowLoader::Impl {
 public:
  Impl(db::Database& db, const LoadOptions& options)
      : m_full_loader(db, options, Sessions::many),
        m_session(db.prepare(sessions_sql(" FROM sessions WHERE sid = ?1", LastEvent::not_wanted))),
        // An ancestor only of the tree's own: another owner's session, or
        // one re-rooted into a tree of its own, is skipped like a SID that
        // is no session.
        m_ancestor(db.prepare(sessions_sql(" FROM sessions WHERE sid = ?1 AND coalesce(tree_sid, root_sid) = ?2"
                                           " AND peer_uid IS ?3",
                                           LastEvent::not_wanted))),
        m_by_pid(db.prepare(k_children_by_pid_sql)),
        m_before(db.prepare(k_children_before_sql)),
        m_child(db.prepare(query(k_children_sql, Sessions::one) + " AND c.child_id = ?3")),
        m_region_before(db.prepare(k_region_before_sql)),
        m_first_region(db.prepare(k_first_region_sql)),
        m_region(db.prepare(query(k_regions_sql, Sessions::one) + " AND enter_seq = ?2")),
        m_thread(db.prepare(query(k_threads_sql, Sessions::one) + " AND thread = ?2")),
        m_execs(db.prepare(query(k_execs_sql, Sessions::one))),
        m_replacement(db.prepare(sessions_sql(" FROM sessions WHERE parent_sid = ?1 AND sid_pid = ?2"
                                              " AND coalesce(tree_sid, root_sid) = ?3 AND peer_uid IS ?4 LIMIT 16",
                                              LastEvent::wanted))) {}

  std::vector<TreeRows> load(const std::vector<ExportSession>& sessions) {
    m_rows.clear();
    m_parts.clear();
    m_index.clear();
    // A huge session's slice (before_seq) is loaded on its own; the others
    // together.
    std::map<std::int64_t, std::vector<std::size_t>> by_slice;  // before_seq -> rows
    for (const ExportSession& session : sessions) {
      const Tree tree{session.root, session.owner};
      if (m_index.contains({tree, session.sid})) {
        continue;
      }
      if (const auto added = add(session.sid, tree, m_session, true)) {
        m_rows[*added].info.events_left_out = session.events_left_out;
        by_slice[session.before_seq.value_or(std::numeric_limits<std::int64_t>::max())].push_back(*added);
      }
    }
    // Before any ancestor is added: the pointers stay valid.
    for (const auto& [before_seq, indexes] : by_slice) {
      std::vector<ProcessRows*> full;
      full.reserve(indexes.size());
      for (const std::size_t i : indexes) {
        full.push_back(&m_rows[i]);
      }
      m_full_loader.load(full, before_seq);
    }
    // A successful exec lasts until the program that replaced the process
    // ends: that program's session (a child with the same pid) is read, as
    // a whole build has it, though nothing of it is sent unless queued.
    for (std::size_t i = 0, queued = m_rows.size(); i < queued; ++i) {
      const ProcessInfo& info = m_rows[i].info;
      const bool exec_worked =
          std::any_of(m_rows[i].execs.begin(), m_rows[i].execs.end(), [](const ExecInfo& e) { return !e.code; });
      if (exec_worked && info.pid) {
        add_replacements(i);
      }
    }
    // Rows are added as ancestors turn up; each is placed in turn.
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
      const std::optional<std::size_t> ancestor = nearest_ancestor(i);
      if (ancestor && !m_parts[*ancestor].full) {
        add_placing_children(*ancestor, i);
      }
    }
    for (ProcessRows& rows : m_rows) {
      // Where two child_starts claim one session, the first keeps it, as in
      // a whole build, which reads them in this order (the rows of a batch,
      // or of an ancestor, may come in another).
      std::sort(rows.children.begin(), rows.children.end(),
                [](const ChildInfo& a, const ChildInfo& b) { return a.child_id < b.child_id; });
    }
    // A statement stopped on a row keeps its read transaction open, and an
    // open reader keeps the WAL from being checkpointed: none stays so.
    for (db::Statement* statement : {&m_session, &m_ancestor, &m_by_pid, &m_before, &m_child, &m_region_before,
                                     &m_first_region, &m_region, &m_thread, &m_execs, &m_replacement}) {
      statement->reset();
    }
    std::vector<TreeRows> trees;
    std::map<Tree, std::size_t> tree_of;
    for (const Parts& parts : m_parts) {
      if (tree_of.try_emplace(parts.tree, trees.size()).second) {
        trees.push_back(TreeRows{parts.tree.root, parts.tree.owner, {}});
      }
    }
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
      trees[tree_of.at(m_parts[i].tree)].rows.push_back(std::move(m_rows[i]));
    }
    return trees;
  }

 private:
  // A tree: its top (tree_sid) and owner.
  struct Tree {
    std::string root;
    Owner owner;
    bool operator<(const Tree& other) const {
      return std::tie(root, owner.uid) < std::tie(other.root, other.owner.uid);
    }
  };

  // What a partly loaded ancestor holds so far.
  struct Parts {
    Tree tree;  // it was loaded for
    bool full = false;
    bool execs = false;  // its execs are loaded
    std::set<std::int64_t> children;
    std::set<std::int64_t> regions;
    std::set<std::string> threads;
  };

  std::optional<std::size_t> add(const std::string& sid, const Tree& tree, db::Statement& select, bool full) {
    select.reset();
    select.bind_text(1, sid);
    if (!full) {
      select.bind_text(2, tree.root);
      select.bind(3, tree.owner.uid);
    }
    if (!select.step()) {
      return std::nullopt;
    }
    const std::size_t index = m_rows.size();
    m_rows.push_back(ProcessRows{read_process(select), {}, {}, {}, {}});
    m_parts.push_back(Parts{tree, full, false, {}, {}, {}});
    m_index.emplace(std::pair{tree, sid}, index);
    return index;
  }

  // The closest session above row `i` (by SID) in its tree, loaded when it
  // is not yet. SID prefixes that are no session are skipped, as placement
  // does; none shorter than the root is tried, nor more than a tree is deep.
  std::optional<std::size_t> nearest_ancestor(std::size_t i) {
    std::string sid = m_rows[i].info.sid;
    const Tree tree = m_parts[i].tree;
    for (std::size_t tries = 0; tries < k_max_tree_depth; ++tries) {
      const auto slash = sid.rfind('/');
      if (slash == std::string::npos || slash < tree.root.size()) {
        return std::nullopt;
      }
      sid.resize(slash);
      if (const auto found = m_index.find({tree, sid}); found != m_index.end()) {
        return found->second;
      }
      if (const auto added = add(sid, tree, m_ancestor, false)) {
        return added;
      }
    }
    return std::nullopt;
  }

  // The child_starts of `ancestor` that may have run row `session`, with
  // the regions and threads that hold them.
  void add_placing_children(std::size_t ancestor, std::size_t session) {
    const ProcessInfo& info = m_rows[session].info;
    std::vector<std::int64_t> ids;
    const std::int64_t ancestor_id = m_rows[ancestor].info.session_id;
    if (info.pid && *info.pid > 0) {  // as the children view claims by pid
      m_by_pid.reset();
      m_by_pid.bind_int(1, ancestor_id);
      m_by_pid.bind_int(2, *info.pid);
      while (m_by_pid.step()) {
        ids.push_back(m_by_pid.column_int(0));
      }
    }
    if (info.start_us) {
      m_before.reset();
      m_before.bind_int(1, ancestor_id);
      m_before.bind_int(2, *info.start_us);
      while (m_before.step()) {
        ids.push_back(m_before.column_int(0));
      }
    }
    for (const std::int64_t id : ids) {
      if (m_parts[ancestor].children.insert(id).second) {
        add_child(ancestor, id);
      }
    }
    // A program that replaced the ancestor by exec keeps its pid: only then
    // can one of the ancestor's execs place it (session_placement.cpp).
    if (info.pid && info.pid == m_rows[ancestor].info.pid && !m_parts[ancestor].execs) {
      m_parts[ancestor].execs = true;
      add_execs(ancestor);
    }
  }

  void add_replacements(std::size_t i) {
    const std::string sid = m_rows[i].info.sid;
    const Tree tree = m_parts[i].tree;
    std::vector<ProcessRows> found;
    m_replacement.reset();
    m_replacement.bind_text(1, sid);
    m_replacement.bind_int(2, *m_rows[i].info.pid);
    m_replacement.bind_text(3, tree.root);
    m_replacement.bind(4, tree.owner.uid);
    while (m_replacement.step()) {
      found.push_back(ProcessRows{read_process(m_replacement), {}, {}, {}, {}});
    }
    for (ProcessRows& rows : found) {
      if (m_index.emplace(std::pair{tree, rows.info.sid}, m_rows.size()).second) {
        m_parts.push_back(Parts{tree, false, false, {}, {}, {}});
        m_rows.push_back(std::move(rows));
      }
    }
  }

  void add_execs(std::size_t ancestor) {
    std::vector<ExecResult> results;
    m_execs.reset();
    m_execs.bind_text(1, m_rows[ancestor].info.sid);
    while (m_execs.step()) {
      read_exec_event(m_execs, m_rows[ancestor], results, m_parser);
    }
    pair_exec_results(m_rows[ancestor], results);
  }

  void add_child(std::size_t ancestor, std::int64_t child_id) {
    ProcessRows found;
    m_child.reset();
    m_child.bind_text(1, m_rows[ancestor].info.sid);
    m_child.bind_int(2, m_rows[ancestor].info.session_id);
    m_child.bind_int(3, child_id);
    while (m_child.step()) {
      read_child(m_child, found);
    }
    for (ChildInfo& child : found.children) {
      if (child.start_seq) {
        add_open_regions(ancestor, child.thread, *child.start_seq);
      }
      if (child.thread != "main") {
        add_thread(ancestor, child.thread);
      }
      m_rows[ancestor].children.push_back(std::move(child));
    }
  }

  // The regions a process tree looks at to find what of `thread` was open
  // at event `seq` (ProcessItems::open_region): the thread's last region
  // before it and that region's parents.
  void add_open_regions(std::size_t ancestor, const std::string& thread, std::int64_t seq) {
    m_region_before.reset();
    m_region_before.bind_text(1, m_rows[ancestor].info.sid);
    m_region_before.bind_text(2, thread);
    m_region_before.bind_int(3, seq);
    if (m_region_before.step()) {
      add_region_chain(ancestor, m_region_before.column_int(0));
    }
  }

  void add_region_chain(std::size_t ancestor, std::int64_t seq) {
    std::optional<std::int64_t> at = seq;
    for (int steps = 0; at && steps < k_max_region_walk; ++steps) {
      if (!m_parts[ancestor].regions.insert(*at).second) {
        return;  // it and its parents are there already
      }
      ProcessRows found;
      m_region.reset();
      m_region.bind_text(1, m_rows[ancestor].info.sid);
      m_region.bind_int(2, *at);
      while (m_region.step()) {
        read_region(m_region, found);
      }
      if (found.regions.empty()) {
        return;
      }
      at = found.regions.front().parent_seq;
      m_rows[ancestor].regions.push_back(std::move(found.regions.front()));
    }
  }

  // A thread's entry, and where it sits: its thread_start in the main
  // thread's open regions, or, without one, where its first region began.
  void add_thread(std::size_t ancestor, const std::string& thread) {
    if (!m_parts[ancestor].threads.insert(thread).second) {
      return;
    }
    const std::string& sid = m_rows[ancestor].info.sid;
    ProcessRows found;
    m_thread.reset();
    m_thread.bind_text(1, sid);
    m_thread.bind_text(2, thread);
    while (m_thread.step()) {
      read_thread(m_thread, found);
    }
    for (ThreadInfo& t : found.threads) {
      if (t.start_seq) {
        add_open_regions(ancestor, "main", *t.start_seq);
      }
      m_rows[ancestor].threads.push_back(std::move(t));
    }
    m_first_region.reset();
    m_first_region.bind_text(1, sid);
    m_first_region.bind_text(2, thread);
    if (m_first_region.step()) {
      const std::int64_t first = m_first_region.column_int(0);
      add_region_chain(ancestor, first);
      if (found.threads.empty()) {
        add_open_regions(ancestor, "main", first);
      }
    }
  }

  FullLoader m_full_loader;
  db::Statement m_session;
  db::Statement m_ancestor;
  db::Statement m_by_pid;
  db::Statement m_before;
  db::Statement m_child;
  db::Statement m_region_before;
  db::Statement m_first_region;
  db::Statement m_region;
  db::Statement m_thread;
  db::Statement m_execs;
  db::Statement m_replacement;
  simdjson::dom::parser m_parser;
  std::vector<ProcessRows> m_rows;
  std::vector<Parts> m_parts;
  // (tree, SID) -> row: a session is loaded once for each tree it serves.
  std::map<std::pair<Tree, std::string>, std::size_t> m_index;
};

ExportRowLoader::ExportRowLoader(db::Database& db, const LoadOptions& options)
    : m_impl(std::make_unique<Impl>(db, options)) {}

ExportRowLoader::~ExportRowLoader() = default;

std::vector<TreeRows> ExportRowLoader::load(const std::vector<ExportSession>& sessions) {
  return m_impl->load(sessions);
}

std::vector<TreeRows> load_export_rows(db::Database& db, const std::vector<ExportSession>& sessions,
                                       const LoadOptions& options) {
  return ExportRowLoader(db, options).load(sessions);
}

}  // namespace trace2d::model
