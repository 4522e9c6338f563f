#pragma once
// The names trace2receiver gives what it exports (docs/otlp.md, "Compared
// with trace2receiver"; tests/data/trace2receiver/emit_rules.json): a
// process's verb and <exe>:<verb>, a region's, child's and exec's span
// name, and the machine's architecture and OS in Go's words.

#include <string>
#include <string_view>

#include "model/process_tree.hpp"

namespace trace2d::otlp {

// The verb of a process's names: its cmd_name, but for git's pseudo-verb
// "_run_dashed_" (git ran `git-<argv[1]>` for it) argv[1]; "" when git
// sent no cmd_name.
[[nodiscard]] std::string_view receiver_verb(const model::ProcessInfo& process);

// "exe:verb" ("git:fetch"), "exe" without a verb.
[[nodiscard]] std::string name_verb(const model::ProcessInfo& process);

// region(<category>,<label>), each with ' ', '-', '.', ',', ':', '(' and
// ')' made '_' and lower-cased; "C" and "L" for a missing one.
[[nodiscard]] std::string region_span_name(std::string_view category, std::string_view label);

// child(hook:<name>), child(alias:git), child(dashed:<argv[0]>), ...
[[nodiscard]] std::string child_span_name(const model::ChildInfo& child);

// exec(<basename of exe>), else exec(<basename of argv[0]>), else exec(?).
[[nodiscard]] std::string exec_span_name(const model::ExecInfo& exec);

// Go's runtime.GOARCH and runtime.GOOS for the machine trace2d was built
// for ("amd64", "linux").
[[nodiscard]] std::string_view machine_arch();
[[nodiscard]] std::string_view machine_os();

}  // namespace trace2d::otlp
