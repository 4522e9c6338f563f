#include "ctl/commands/session_columns.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <variant>

#include "ctl/query/owner.hpp"
#include "ctl/query/sid.hpp"
#include "ctl/render/describe.hpp"
#include "model/tree_loader.hpp"

namespace trace2d::ctl {
namespace {

std::optional<std::size_t> column_index(const ResultSet& result, const std::string& name) {
  const auto it = std::find(result.columns.begin(), result.columns.end(), name);
  if (it == result.columns.end()) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(it - result.columns.begin());
}

void present_owner(ResultSet& result, OutputFormat format) {
  const auto owner = column_index(result, "owner");
  if (!owner) {
    return;
  }
  UserNames names;
  for (Row& row : result.rows) {
    Value& value = row[*owner];
    const auto* uid = std::get_if<std::int64_t>(&value);
    if (is_machine_format(format)) {
      const std::optional<std::string> name = uid != nullptr ? names.name_of(*uid) : std::nullopt;
      value = name ? Value(*name) : Value(Null{});
    } else {
      value = uid != nullptr ? names.label_of(*uid) : std::string("-");
    }
  }
}

}  // namespace

void present_session_columns(ResultSet& result, db::Database& db, OutputFormat format, SidForm sid_form) {
  result.json_columns = {"argv"};
  present_owner(result, format);
  if (is_machine_format(format)) {
    return;
  }
  if (const auto argv = column_index(result, "argv")) {
    for (Row& row : result.rows) {
      if (const auto* json = std::get_if<std::string>(&row[*argv])) {
        row[*argv] = render::join_argv(model::parse_string_array(*json));
      }
    }
  }
  const auto sid = column_index(result, "sid");
  if (sid_form == SidForm::whole || !sid || result.rows.empty()) {
    return;
  }
  const SidAbbreviator abbreviator(db);
  for (Row& row : result.rows) {
    if (const auto* text = std::get_if<std::string>(&row[*sid])) {
      row[*sid] = abbreviator.shorten(*text);
    }
  }
}

}  // namespace trace2d::ctl
