#pragma once
// One process (one SID) as the `sessions` table stores it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/source/origin.hpp"

namespace trace2d::stitch {

enum class SessionStatus : std::uint8_t { running, complete, incomplete };

[[nodiscard]] constexpr std::string_view to_string(SessionStatus status) {
  switch (status) {
    case SessionStatus::running: return "running";
    case SessionStatus::complete: return "complete";
    case SessionStatus::incomplete: return "incomplete";
  }
  return "running";
}

[[nodiscard]] std::optional<SessionStatus> session_status_from_string(std::string_view text);

struct SessionRecord {
  std::int64_t id = 0;  // integer key that event rows refer to
  std::string sid;
  std::optional<std::string> evt;
  std::optional<std::string> exe;
  std::optional<std::string> argv;  // JSON array text
  std::optional<std::string> cmd_name;
  std::optional<std::string> hierarchy;
  std::optional<std::string> cmd_mode;
  std::optional<std::string> worktree;
  std::optional<std::string> cmd_path;
  std::optional<std::int64_t> start_time_us;
  std::optional<std::int64_t> end_time_us;
  std::optional<double> elapsed;
  std::optional<std::int64_t> exit_code;
  std::optional<std::int64_t> signo;
  SessionStatus status = SessionStatus::running;
  source::SourceKind source = source::SourceKind::stream;
  std::optional<std::int64_t> peer_pid;
  std::optional<std::int64_t> peer_uid;
  std::int64_t event_count = 0;
  std::int64_t error_count = 0;
  std::int64_t problem_count = 0;
  std::int64_t first_received_us = 0;
  std::int64_t last_received_us = 0;
  // Event times are stored relative to this (the session's first "time").
  std::optional<std::int64_t> time_base_us;
};

}  // namespace trace2d::stitch
