#include "ctl/commands/session_columns.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
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

// The last `count` components of `path` ("/" separated, no leading one).
std::string last_components(const std::string& path, std::size_t count) {
  std::size_t start = path.size();
  for (std::size_t found = 0; found < count; ++found) {
    const std::size_t slash = start == 0 ? std::string::npos : path.rfind('/', start - 1);
    if (slash == std::string::npos) {
      return path;
    }
    start = slash;
  }
  return path.substr(start + 1);
}

}  // namespace

std::map<std::string, std::string> shortest_unique_paths(const std::set<std::string>& paths) {
  std::map<std::string, std::string> shown;
  for (const std::string& path : paths) {
    const auto depth = static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
    std::string name = path;
    for (std::size_t count = 1; count < depth; ++count) {
      const std::string candidate = last_components(path, count);
      const bool unique = std::none_of(paths.begin(), paths.end(), [&](const std::string& other) {
        return other != path && (other == candidate || other.ends_with("/" + candidate));
      });
      if (unique) {
        name = candidate;
        break;
      }
    }
    shown[path] = name;
  }
  return shown;
}

void present_session_columns(ResultSet& result, db::Database& db, OutputFormat format, SidForm sid_form) {
  result.json_columns = {"argv"};
  present_owner(result, format);
  if (is_machine_format(format)) {
    return;
  }
  if (const auto repository = column_index(result, "repository")) {
    // Worktrees (absolute paths) by their shortest unique ending; nicknames as they are.
    std::set<std::string> paths;
    for (const Row& row : result.rows) {
      if (const auto* text = std::get_if<std::string>(&row[*repository]); text != nullptr && text->starts_with('/')) {
        paths.insert(*text);
      }
    }
    const std::map<std::string, std::string> shown = shortest_unique_paths(paths);
    for (Row& row : result.rows) {
      if (const auto* text = std::get_if<std::string>(&row[*repository])) {
        if (const auto it = shown.find(*text); it != shown.end()) {
          row[*repository] = it->second;
        }
      } else {
        row[*repository] = std::string("-");
      }
    }
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
  std::vector<std::string> sids;
  for (const Row& row : result.rows) {
    if (const auto* text = std::get_if<std::string>(&row[*sid])) {
      sids.push_back(*text);
    }
  }
  const SidAbbreviator abbreviator(db, sids);
  for (Row& row : result.rows) {
    if (const auto* text = std::get_if<std::string>(&row[*sid])) {
      row[*sid] = abbreviator.shorten(*text);
    }
  }
}

}  // namespace trace2d::ctl
