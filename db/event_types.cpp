#include "db/event_types.hpp"

#include <vector>

namespace trace2d::db {

std::string stored_type_condition(std::string_view column, std::span<const proto::EventKind> kinds) {
  std::vector<std::int64_t> ids;
  for (const proto::EventKind kind : kinds) {
    ids.push_back(stored_type(kind));
  }
  std::string listed;
  std::string ranges;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t end = i + 1;
    while (end < ids.size() && ids[end] == ids[end - 1] + 1) {
      ++end;
    }
    if (end - i >= 3) {
      ranges += " OR " + std::string(column) + " BETWEEN " + std::to_string(ids[i]) + " AND " +
                std::to_string(ids[end - 1]);
    } else {
      for (std::size_t k = i; k < end; ++k) {
        listed += (listed.empty() ? "" : ", ") + std::to_string(ids[k]);
      }
    }
    i = end;
  }
  if (listed.empty()) {
    return ranges.empty() ? "0" : "(" + ranges.substr(4) + ")";
  }
  return "(" + std::string(column) + " IN (" + listed + ")" + ranges + ")";
}

}  // namespace trace2d::db
