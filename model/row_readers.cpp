#include "model/row_readers.hpp"

#include <array>
#include <charconv>
#include <unordered_map>

#include "db/event_types.hpp"
#include "model/tree_loader.hpp"
#include "proto/event.hpp"

namespace trace2d::model::loading {
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

void add_exec_event(std::int64_t type, std::int64_t seq, std::optional<std::string_view> thread,
                    const simdjson::dom::object& obj, std::optional<double> t, ProcessRows& rows,
                    std::vector<ExecResult>& results) {
  std::int64_t exec_id = 0;
  if (obj["exec_id"].get(exec_id) != simdjson::SUCCESS) {
    return;
  }
  if (type != db::stored_type(proto::EventKind::exec)) {
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

void append_integer(std::string& out, std::int64_t n) {
  std::array<char, 24> digits{};
  out.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), n).ptr);
}

}  // namespace trace2d::model::loading
