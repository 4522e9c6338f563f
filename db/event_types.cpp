#include "db/event_types.hpp"

#include <cstdint>

namespace trace2d::db {

static_assert(stored_type(proto::EventKind::unknown) < 63, "a kind's bit must fit in a positive 64-bit mask");

std::string stored_type_condition(std::string_view column, std::span<const proto::EventKind> kinds) {
  std::uint64_t mask = 0;
  for (const proto::EventKind kind : kinds) {
    mask |= std::uint64_t{1} << stored_type(kind);
  }
  if (mask == 0) {
    return "0";
  }
  return "(((1 << " + std::string(column) + ") & " + std::to_string(static_cast<std::int64_t>(mask)) + ") != 0)";
}

}  // namespace trace2d::db
