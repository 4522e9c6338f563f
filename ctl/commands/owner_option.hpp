#pragma once
// --uid for the commands that show one process tree (tree, export): a tree
// is one owner's, and under a SID prefix that is no session (a
// GIT_TRACE2_PARENT_SID such as "ci-job 42") several users may have trees.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>

#include "model/tree_loader.hpp"

namespace trace2d::ctl {

void add_owner_option(CLI::App& app, std::optional<std::int64_t>& uid);

// The load options that ask for `uid`'s tree (-1: imported sessions, which
// have no uid), or for whichever owner the SID names.
[[nodiscard]] model::LoadOptions load_options_for(const std::optional<std::int64_t>& uid);

}  // namespace trace2d::ctl
