#pragma once
// Whether a node of a process tree failed and, for a process, why: one
// answer for the text tree (its red lines and the reason beside them) and
// the JSON tree (`reason`).

#include <string>

#include "model/process_tree.hpp"

namespace trace2d::ctl::render {

// As ctl/query/failed.hpp has it for sessions (a non-zero exit, a signal,
// never finished unless an exec replaced it); a child or an exec by its
// exit code.
[[nodiscard]] bool failed(const model::Node& node);

// Why a process node failed, in a few words (model::failure_reason(), from
// its own first error message, else the first of the processes below it
// that reported one, as `sessions --failed` says); empty for one that did
// not fail or that is no process.
[[nodiscard]] std::string failure_reason(const model::Node& node);

}  // namespace trace2d::ctl::render
