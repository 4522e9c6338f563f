#pragma once
// Query results held independently of the statement that produced them, so
// one command can print them as a table or as JSON, and so a table can size
// its columns before printing the first row.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "db/sqlite.hpp"

namespace trace2d::ctl {

struct Null {
  bool operator==(const Null&) const = default;
};
struct Blob {
  std::string bytes;
  bool operator==(const Blob&) const = default;
};

// One SQLite value, with the storage class SQLite reported for it (SQLite
// types values, not columns: one column can hold several classes).
using Value = std::variant<Null, std::int64_t, double, std::string, Blob>;

using Row = std::vector<Value>;

struct ResultSet {
  std::vector<std::string> columns;
  std::vector<Row> rows;
  // Columns whose TEXT is a JSON document (argv: an array of strings):
  // JSON output embeds it as it is, not as a string, so `argv` has one
  // shape (an array) in every command's JSON.
  std::vector<std::string> json_columns;
};

// The current row of `stmt`.
[[nodiscard]] Row read_row(const db::Statement& stmt);
[[nodiscard]] std::vector<std::string> read_column_names(const db::Statement& stmt);

// Steps `stmt` to the end, collecting every row.
[[nodiscard]] ResultSet read_all(db::Statement& stmt);

// REAL as text that reads back as the same double and never looks like an
// INTEGER ("2.0", not "2"). Infinities come out as "Inf"/"-Inf".
[[nodiscard]] std::string format_real(double value);

// Lowercase hex, two digits per byte: how BLOBs appear in tables and JSON.
[[nodiscard]] std::string hex_encode(std::string_view bytes);

// Removes the column `name` (and its cells) when `result` has it.
void drop_column(ResultSet& result, const std::string& name);

}  // namespace trace2d::ctl
