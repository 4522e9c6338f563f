#include "daemon/stitch/session_record.hpp"

#include <fmt/format.h>

#include <iterator>

namespace trace2d::stitch {

std::optional<SessionStatus> session_status_from_string(std::string_view text) {
  for (auto status : {SessionStatus::running, SessionStatus::complete, SessionStatus::incomplete}) {
    if (to_string(status) == text) {
      return status;
    }
  }
  return std::nullopt;
}

std::string lost_lines_message(const SessionRecord& record) {
  std::string reasons;
  std::int64_t explained = 0;
  for (std::size_t reason = 0; reason < record.lost_by_reason.size(); ++reason) {
    const std::int64_t lines = record.lost_by_reason[reason];
    if (lines > 0) {
      explained += lines;
      fmt::format_to(std::back_inserter(reasons), "{}{} {}", reasons.empty() ? "" : ", ", lines,
                     ingest::to_string(static_cast<ingest::LossReason>(reason)));
    }
  }
  if (explained < record.lines_lost) {
    fmt::format_to(std::back_inserter(reasons), "{}{} before the daemon last started", reasons.empty() ? "" : ", ",
                   record.lines_lost - explained);
  }
  return fmt::format("{} lines of this session lost before they could be stored ({}): the session is not whole",
                     record.lines_lost, reasons);
}

}  // namespace trace2d::stitch
