#pragma once
// The one place that says which command a run counts as, for `compare`
// (and whatever else groups runs by command): the columns of `sessions`
// the grouping reads and the function that names the group. Today the
// group is git's cmd_name; a display name (`_run_dashed_` as the dashed
// command, an alias as itself) changes only this file.

#include <optional>
#include <string>
#include <string_view>

namespace trace2d::ctl {

// What the grouping reads of a session, in the order of
// k_command_identity_columns.
struct CommandIdentity {
  std::optional<std::string_view> cmd_name;
};

// The columns of `sessions` (alias `s`) to select, in that order.
inline constexpr std::string_view k_command_identity_columns = "s.cmd_name";
inline constexpr int k_command_identity_column_count = 1;

// The group a run belongs to; nullopt for a run that names no command
// (it never sent cmd_name): such runs are left out.
[[nodiscard]] std::optional<std::string> command_group(const CommandIdentity& identity);

}  // namespace trace2d::ctl
