#include "proto/event.hpp"

#include <array>
#include <utility>

namespace trace2d::proto {
namespace {

// Canonical names first: to_string() returns the first match.
constexpr std::array<std::pair<std::string_view, EventKind>, 32> k_names{{
    {"version", EventKind::version},
    {"too_many_files", EventKind::too_many_files},
    {"start", EventKind::start},
    {"exit", EventKind::exit},
    {"atexit", EventKind::atexit},
    {"signal", EventKind::signal},
    {"error", EventKind::error},
    {"cmd_path", EventKind::cmd_path},
    {"cmd_ancestry", EventKind::cmd_ancestry},
    {"cmd_name", EventKind::cmd_name},
    {"cmd_mode", EventKind::cmd_mode},
    {"alias", EventKind::alias},
    {"child_start", EventKind::child_start},
    {"child_exit", EventKind::child_exit},
    {"child_ready", EventKind::child_ready},
    {"thread_start", EventKind::thread_start},
    {"thread_exit", EventKind::thread_exit},
    {"exec", EventKind::exec},
    {"exec_result", EventKind::exec_result},
    {"def_param", EventKind::def_param},
    {"def_repo", EventKind::def_repo},
    {"region_enter", EventKind::region_enter},
    {"region_leave", EventKind::region_leave},
    {"data", EventKind::data},
    {"data_json", EventKind::data_json},
    {"timer", EventKind::timer},
    {"th_timer", EventKind::th_timer},
    {"counter", EventKind::counter},
    {"th_counter", EventKind::th_counter},
    {"printf", EventKind::printf},
    {"command", EventKind::command},
    // repo writes data_json with a hyphen.
    {"data-json", EventKind::data_json},
}};

}  // namespace

std::string_view to_string(EventKind kind) {
  for (const auto& [name, k] : k_names) {
    if (k == kind) {
      return name;
    }
  }
  return "unknown";
}

EventKind event_kind_from_name(std::string_view name) {
  for (const auto& [n, kind] : k_names) {
    if (n == name) {
      return kind;
    }
  }
  return EventKind::unknown;
}

bool is_terminal(EventKind kind) {
  return kind == EventKind::exit || kind == EventKind::atexit || kind == EventKind::signal;
}

}  // namespace trace2d::proto
