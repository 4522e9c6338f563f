#pragma once
// The one place that says how advice groups runs into "a command": every
// rule's SQL reads the runs from here, so the notion changes all rules at
// once.
//
// A run is what the user ran, as the listings show it (`trace2ctl
// sessions`): a top-level session, under its display name
// (model/command_identity.hpp): `git st` (an alias) counts as `st`, `git
// submodule update` as `submodule`. What a run cost is spent in its own
// process and in the git processes under it (the `git status` an alias
// runs, the `git fetch` of a submodule script, the git a hook runs): each
// process belongs to the run at its top, and its costs count for that run.

#include <string>
#include <string_view>

namespace trace2d::ctl::advice {

// The names of the CTEs runs_sql() defines.
inline constexpr std::string_view k_runs_table = "advice_runs";
inline constexpr std::string_view k_processes_table = "w";

// The common table expressions, after "WITH " (they begin with RECURSIVE),
// that define
//   advice_runs (sid, command, elapsed): the finished runs of the window
//     with a command: top-level sessions whose sessions-alias `s` row meets
//     `window_condition` ("AND ..."), under their display name;
//   w (sid, run_sid, command, cmd_name, elapsed, worktree, git, peer_uid):
//     every process of those runs (the run's own session and the git
//     processes under it, of the same owner): its SID, its run's SID,
//     display name and elapsed time, its own cmd_name and worktree (and
//     what the walk down needs: whether it is git, its owner).
[[nodiscard]] std::string runs_sql(const std::string& window_condition);

}  // namespace trace2d::ctl::advice
