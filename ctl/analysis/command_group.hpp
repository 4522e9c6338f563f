#pragma once
// The one place that says which command a run counts as, for `compare`
// (and whatever else groups runs by command): the columns of `sessions`
// the grouping reads and the function that names the group. The group is
// the run's display name (model/command_identity.hpp), as the listings
// show it: `git submodule` as `submodule` (not `_run_dashed_`), `git st`
// as the alias `st`.

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace trace2d::ctl {

// What the grouping reads of a session, in the order of
// k_command_identity_columns.
struct CommandIdentity {
  std::optional<std::string_view> cmd_name;
  std::optional<std::string_view> argv;  // a JSON array, as stored
};

// The columns of `sessions` (alias `s`) to select, in that order.
inline constexpr std::string_view k_command_identity_columns = "s.cmd_name, s.argv";
inline constexpr int k_command_identity_column_count = 2;

// The group a run belongs to; nullopt for a run that names no command
// (it never sent cmd_name): such runs are left out.
[[nodiscard]] std::optional<std::string> command_group(const CommandIdentity& identity);

// Whether `--cmd` keeps a run of `group`: `only` is empty, or names the
// group or git's cmd_name (`_run_dashed_`), as the listings' --cmd does.
[[nodiscard]] bool command_selected(const CommandIdentity& identity, const std::string& group,
                                    std::span<const std::string> only);

}  // namespace trace2d::ctl
