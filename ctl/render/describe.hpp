#pragma once
// How the analysis commands name and time things, in text, SVG and Chrome
// traces alike: one place, so `tree`, `report` and `export` agree.

#include <optional>
#include <string>
#include <vector>

#include "model/process_tree.hpp"

namespace trace2d::ctl::render {

// Seconds as milliseconds with three decimals ("21.277"); empty when unknown.
[[nodiscard]] std::string format_ms(const std::optional<double>& seconds);

// argv as a shell would read it back: words with blanks or quotes in
// single quotes. `shell_command`: argv[0] is itself a command line (a child
// git ran with use_shell) and is shown as it is.
[[nodiscard]] std::string join_argv(const std::vector<std::string>& argv, bool shell_command = false);

// The command of a process: cmd_name, else argv[0]'s base name, else "?".
[[nodiscard]] std::string process_name(const model::ProcessInfo& process);

// How a process ended: "exit 0", "signal 13", "running", "incomplete".
[[nodiscard]] std::string process_outcome(const model::ProcessInfo& process);

// "category:label".
[[nodiscard]] std::string region_name(const model::RegionInfo& region);

// "child 0 transport/file" / "child 1 hook pre-commit" / "child 2".
[[nodiscard]] std::string child_name(const model::ChildInfo& child);

// "shell, pid 5387, exit 0"; "not started" when git could not run it.
// Without a child_exit: "running" while the process that ran it runs, "no
// exit recorded" once it has ended (a git that dies sends no child_exit).
[[nodiscard]] std::string child_outcome(const model::ChildInfo& child, bool process_ended);

// "exec 0" / "exec 0 git" (its exe, when the event names one).
[[nodiscard]] std::string exec_name(const model::ExecInfo& exec);

// "failed, code -1" after an exec_result; "replaced the process" otherwise.
[[nodiscard]] std::string exec_outcome(const model::ExecInfo& exec);

// One line describing any node (what `tree` prints after the connectors).
// `with_argv`: a process's argv too (not needed under its child_start).
// `process_ended`: whether the process the node belongs to has ended.
[[nodiscard]] std::string node_label(const model::Node& node, bool with_argv, bool with_sid, bool process_ended);

}  // namespace trace2d::ctl::render
