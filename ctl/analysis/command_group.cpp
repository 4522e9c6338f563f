#include "ctl/analysis/command_group.hpp"

#include <algorithm>

#include "model/command_identity.hpp"

namespace trace2d::ctl {

std::optional<std::string> command_group(const CommandIdentity& identity) {
  if (!identity.cmd_name || identity.cmd_name->empty()) {
    return std::nullopt;
  }
  return model::display_name_from_json(*identity.cmd_name, identity.argv.value_or(std::string_view()));
}

bool command_selected(const CommandIdentity& identity, const std::string& group, std::span<const std::string> only) {
  if (only.empty()) {
    return true;
  }
  const auto named = [&only](std::string_view name) { return std::find(only.begin(), only.end(), name) != only.end(); };
  return named(group) || (identity.cmd_name && named(*identity.cmd_name));
}

}  // namespace trace2d::ctl
