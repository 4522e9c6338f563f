#pragma once
// Sessions stored earlier, for the stitcher to resume when one of them sends
// more events (after a restart, or after it was evicted from memory).

#include <optional>
#include <string_view>

#include "daemon/stitch/session_record.hpp"

namespace trace2d::stitch {

class SessionCatalog {
 public:
  virtual ~SessionCatalog() = default;
  [[nodiscard]] virtual std::optional<SessionRecord> find(std::string_view sid) = 0;
};

}  // namespace trace2d::stitch
