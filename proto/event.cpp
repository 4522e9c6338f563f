#include "proto/event.hpp"

#include <array>
#include <cstdint>
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

// The names grouped by length: every event is looked up, and a compare
// per candidate name of the same length (two or three at most) is all it costs.
struct NameBuckets {
  static constexpr std::size_t k_max_length = 14;  // "too_many_files"
  static constexpr std::size_t k_max_per_length = 6;
  std::array<std::array<std::uint8_t, k_max_per_length>, k_max_length + 1> entries{};
  std::array<std::uint8_t, k_max_length + 1> count{};
};

constexpr NameBuckets make_name_buckets() {
  NameBuckets buckets;
  for (std::size_t i = 0; i < k_names.size(); ++i) {
    const std::size_t length = k_names[i].first.size();
    if (length > NameBuckets::k_max_length || buckets.count[length] == NameBuckets::k_max_per_length) {
      throw "NameBuckets too small";  // fails the constant evaluation
    }
    buckets.entries[length][buckets.count[length]++] = static_cast<std::uint8_t>(i);
  }
  return buckets;
}

constexpr NameBuckets k_name_buckets = make_name_buckets();

}  // namespace

std::string_view to_string(EventKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  return index < static_cast<std::size_t>(EventKind::unknown) ? k_names[index].first : "unknown";
}

EventKind event_kind_from_name(std::string_view name) {
  if (name.empty() || name.size() > NameBuckets::k_max_length) {
    return EventKind::unknown;
  }
  const auto& candidates = k_name_buckets.entries[name.size()];
  for (std::size_t i = 0; i < k_name_buckets.count[name.size()]; ++i) {
    const auto& [known, kind] = k_names[candidates[i]];
    if (known.front() == name.front() && known == name) {
      return kind;
    }
  }
  return EventKind::unknown;
}

bool is_terminal(EventKind kind) {
  return kind == EventKind::exit || kind == EventKind::atexit || kind == EventKind::signal;
}

}  // namespace trace2d::proto
