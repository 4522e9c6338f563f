#pragma once
// Rows of the loaders' statements into ProcessRows: a session's row
// (sessions_sql's columns), regions, children, threads, and exec events
// paired with their results. Internal to model/.

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/sqlite.hpp"
#include "model/process_tree.hpp"

namespace trace2d::model::loading {

// An argv as parse_string_array() gives it, from a parsed value: the
// strings of an array (other elements as JSON text), or one element holding
// the text of anything else.
[[nodiscard]] std::vector<std::string> string_array(simdjson::dom::element value);
[[nodiscard]] std::string text_or_empty(const db::Statement& stmt, int column);
void append_integer(std::string& out, std::int64_t n);

// A row of sessions_sql(): its ProcessInfo.
[[nodiscard]] ProcessInfo read_process(const db::Statement& stmt);
// One row of the regions, children and threads views' queries into its
// session's rows (export_row_loader.cpp's).
void read_region(const db::Statement& stmt, ProcessRows& rows);
void read_child(const db::Statement& stmt, ProcessRows& rows);
void read_thread(const db::Statement& stmt, ProcessRows& rows);
// All but the thread (column 2: its name, or its names.id for
// full_loader.cpp's child rows), which the caller sets.
ChildInfo& read_child_columns(const db::Statement& stmt, ProcessRows& rows);

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
                    std::vector<ExecResult>& results);
// A row of the exec events' query (type, seq, thread, obj, t).
void read_exec_event(const db::Statement& stmt, ProcessRows& rows, std::vector<ExecResult>& results,
                     simdjson::dom::parser& parser);
// An exec_result belongs to the latest exec before it with its exec_id
// that has none yet; one without such an exec is left out (it says nothing
// of a process it could be drawn against). By exec_id through a map: a
// hostile session's million unmatched results cost no more than as many
// lookups.
void pair_exec_results(ProcessRows& rows, const std::vector<ExecResult>& results);

}  // namespace trace2d::model::loading
