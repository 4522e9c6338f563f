#pragma once
// `--by` of `stats` and `top`: `commands` or `regions` as before, or one or
// more dimensions, comma-separated: cmd, repo, version, uid, nickname
// (`--by repo,cmd`).

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ctl/query/analysis_queries.hpp"

namespace trace2d::ctl {

// The dimensions `by` names, or nullopt for `commands` and `regions`.
// Throws CLI::ValidationError's message as text via describe_group_error().
[[nodiscard]] std::optional<std::vector<GroupKey>> group_keys(const std::string& by);

// Empty when `by` is valid, else what is wrong with it (a CLI11 validator).
[[nodiscard]] std::string describe_group_error(const std::string& by);

inline constexpr const char* k_group_help =
    "cmd, repo, version, uid, nickname, or several comma-separated (repo,cmd)";

}  // namespace trace2d::ctl
