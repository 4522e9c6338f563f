#include "daemon/stitch/session_record.hpp"

namespace trace2d::stitch {

std::optional<SessionStatus> session_status_from_string(std::string_view text) {
  for (auto status : {SessionStatus::running, SessionStatus::complete, SessionStatus::incomplete}) {
    if (to_string(status) == text) {
      return status;
    }
  }
  return std::nullopt;
}

}  // namespace trace2d::stitch
