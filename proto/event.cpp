#include "proto/event.hpp"

#include <array>
#include <utility>

#include "proto/length_buckets.hpp"

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

// The enum's values are the table's first entries, in order: to_string()
// is an index.
constexpr bool names_follow_the_enum() {
  for (std::size_t i = 0; i < static_cast<std::size_t>(EventKind::unknown); ++i) {
    if (static_cast<std::size_t>(k_names[i].second) != i) {
      return false;
    }
  }
  return true;
}
static_assert(names_follow_the_enum());

constexpr auto name_at = [](std::size_t index) { return k_names[index].first; };  // a type of its own: inlined

constexpr LengthBuckets<14, 6> k_name_buckets(k_names.size(), name_at);  // 14: "too_many_files"

}  // namespace

std::string_view to_string(EventKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  return index < static_cast<std::size_t>(EventKind::unknown) ? k_names[index].first : "unknown";
}

EventKind event_kind_from_name(std::string_view name) {
  const std::optional<std::size_t> index = k_name_buckets.find(name, name_at);
  return index ? k_names[*index].second : EventKind::unknown;
}

bool is_terminal(EventKind kind) {
  return kind == EventKind::exit || kind == EventKind::atexit || kind == EventKind::signal;
}

}  // namespace trace2d::proto
