#pragma once
// The ids of git's event kinds in the store (event_store.type, event_parts.type,
// names.id): EventKind + 1, seeded once by the first migration. The views of
// later migrations name some of them as numbers, so they never change
// (schema.cpp pins them); code names them through here, never as numbers.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "proto/event.hpp"

namespace trace2d::db {

[[nodiscard]] constexpr std::int64_t stored_type(proto::EventKind kind) { return static_cast<std::int64_t>(kind) + 1; }

// An SQL condition true when `column` holds one of `kinds`' ids: its bit in
// a mask of them (SQLite tested an IN list by a seek in a temporary index
// for every row a scan read, and each range by two comparisons). An id of
// 64 or more, or below 0, is none of them (SQLite shifts it out).
[[nodiscard]] std::string stored_type_condition(std::string_view column, std::span<const proto::EventKind> kinds);

}  // namespace trace2d::db
