#include "ctl/query/failed.hpp"

#include <optional>
#include <string>
#include <variant>

#include "model/command_identity.hpp"

namespace trace2d::ctl {
namespace {

std::optional<std::size_t> find_column(const ResultSet& result, const std::string& name) {
  for (std::size_t c = 0; c < result.columns.size(); ++c) {
    if (result.columns[c] == name) {
      return c;
    }
  }
  return std::nullopt;
}

std::optional<std::int64_t> int_cell(const Row& row, std::optional<std::size_t> column) {
  if (!column) {
    return std::nullopt;
  }
  const auto* value = std::get_if<std::int64_t>(&row[*column]);
  return value != nullptr ? std::optional<std::int64_t>(*value) : std::nullopt;
}

}  // namespace

void present_failure_reason(ResultSet& result) {
  const auto first_error = find_column(result, "first_error");
  if (!first_error) {
    return;
  }
  const auto exit_code = find_column(result, "exit_code");
  const auto signo = find_column(result, "signo");
  const auto status = find_column(result, "status");
  for (Row& row : result.rows) {
    const auto* error = std::get_if<std::string>(&row[*first_error]);
    const auto* state = status ? std::get_if<std::string>(&row[*status]) : nullptr;
    const std::string reason = model::failure_reason(
        int_cell(row, exit_code), int_cell(row, signo), state != nullptr ? std::string_view(*state) : std::string_view(),
        error != nullptr ? std::optional<std::string_view>(*error) : std::nullopt);
    row[*first_error] = reason.empty() ? Value(Null{}) : Value(reason);
  }
  result.columns[*first_error] = "reason";
}

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
  const auto reason = find("reason");
  return [exit_code, signo, status, reason](const Row& row) {
    if (reason && *reason < row.size() && !std::holds_alternative<Null>(row[*reason])) {
      return true;
    }
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
