#include "ctl/query/failed.hpp"

#include <optional>
#include <string>
#include <variant>

namespace trace2d::ctl {

std::function<bool(const Row&)> failed_row(const ResultSet& result) {
  const auto find = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t c = 0; c < result.columns.size(); ++c) {
      if (result.columns[c] == name) {
        return c;
      }
    }
    return std::nullopt;
  };
  const auto exit_code = find("exit_code");
  const auto signo = find("signo");
  const auto status = find("status");
  return [exit_code, signo, status](const Row& row) {
    if (exit_code && *exit_code < row.size()) {
      const auto* code = std::get_if<std::int64_t>(&row[*exit_code]);
      if (code != nullptr && *code != 0) {
        return true;
      }
    }
    if (signo && *signo < row.size() && !std::holds_alternative<Null>(row[*signo])) {
      return true;
    }
    if (status && *status < row.size()) {
      const auto* text = std::get_if<std::string>(&row[*status]);
      // A table's status of a session that lost lines ("complete, 12 lines lost") alerts too.
      return text != nullptr && (text->starts_with("incomplete") || text->ends_with(" lines lost"));
    }
    return false;
  };
}

}  // namespace trace2d::ctl
