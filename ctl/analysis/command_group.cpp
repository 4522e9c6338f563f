#include "ctl/analysis/command_group.hpp"

namespace trace2d::ctl {

std::optional<std::string> command_group(const CommandIdentity& identity) {
  if (!identity.cmd_name || identity.cmd_name->empty()) {
    return std::nullopt;
  }
  return std::string(*identity.cmd_name);
}

}  // namespace trace2d::ctl
