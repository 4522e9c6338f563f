#include "ctl/output/result_set.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace trace2d::ctl {

Row read_row(const db::Statement& stmt) {
  Row row;
  const int count = stmt.column_count();
  row.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    switch (stmt.column_type(i)) {
      case SQLITE_INTEGER: row.emplace_back(stmt.column_int(i)); break;
      case SQLITE_FLOAT: row.emplace_back(stmt.column_double(i)); break;
      case SQLITE_TEXT: row.emplace_back(std::string(stmt.column_text(i))); break;
      case SQLITE_BLOB: row.emplace_back(Blob{std::string(stmt.column_blob(i))}); break;
      default: row.emplace_back(Null{}); break;
    }
  }
  return row;
}

std::vector<std::string> read_column_names(const db::Statement& stmt) {
  std::vector<std::string> names;
  const int count = stmt.column_count();
  names.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    names.emplace_back(stmt.column_name(i));
  }
  return names;
}

ResultSet read_all(db::Statement& stmt) {
  ResultSet result;
  result.columns = read_column_names(stmt);
  while (stmt.step()) {
    result.rows.push_back(read_row(stmt));
  }
  return result;
}

std::string format_real(double value) {
  if (std::isinf(value)) {
    return value > 0 ? "Inf" : "-Inf";
  }
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  std::string text(buf, ec == std::errc() ? end : buf);
  if (text.find_first_of(".en") == std::string::npos) {
    text += ".0";
  }
  return text;
}

std::string hex_encode(std::string_view bytes) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(k_hex[b >> 4]);
    out.push_back(k_hex[b & 0xF]);
  }
  return out;
}

void drop_column(ResultSet& result, const std::string& name) {
  const auto it = std::find(result.columns.begin(), result.columns.end(), name);
  if (it == result.columns.end()) {
    return;
  }
  const auto index = it - result.columns.begin();
  result.columns.erase(it);
  for (Row& row : result.rows) {
    row.erase(row.begin() + index);
  }
}

}  // namespace trace2d::ctl
