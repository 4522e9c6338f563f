#include "model/loader_sql.hpp"

#include <array>

#include "db/event_codec.hpp"
#include "db/event_types.hpp"
#include "proto/event.hpp"

namespace trace2d::model::loading {
namespace {

constexpr std::string_view k_session_columns =
    "SELECT id, sid, parent_sid, depth, cmd_name, hierarchy, argv, sid_pid, start_time, process_start_us,"
    " elapsed, exit_code, signo, status, cmd_mode, exe, error_count, time_base_us, coalesce(tree_sid, root_sid),"
    " peer_uid, lines_lost, ";
constexpr std::string_view k_last_event =
    "time_base_us + (SELECT max(e.time_us) FROM event_store e WHERE e.session = sessions.id)";

// The kinds of event that threads, execs, errors, params, data, timers and
// counters come from.
constexpr std::array k_scanned_kinds = {
    proto::EventKind::error,        proto::EventKind::cmd_ancestry, proto::EventKind::alias,
    proto::EventKind::thread_start, proto::EventKind::thread_exit,  proto::EventKind::exec,
    proto::EventKind::exec_result,  proto::EventKind::def_param,    proto::EventKind::def_repo,
    proto::EventKind::data,         proto::EventKind::data_json,    proto::EventKind::timer,
    proto::EventKind::th_timer,     proto::EventKind::counter,      proto::EventKind::th_counter,
    proto::EventKind::printf};
constexpr std::array k_exec_kinds = {proto::EventKind::exec, proto::EventKind::exec_result};

}  // namespace

std::string sessions_sql(std::string_view where, LastEvent last_event) {
  std::string sql(k_session_columns);
  sql += last_event == LastEvent::wanted ? k_last_event : std::string_view("NULL");
  sql += where;
  return sql;
}

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

}  // namespace trace2d::model::loading
