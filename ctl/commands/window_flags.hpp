#pragma once
// --since and --cmd, as `top`, `stats` and `report` take them.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ctl/query/analysis_queries.hpp"

namespace trace2d::ctl {

struct WindowFlags {
  std::string since;
  std::string until;
  std::vector<std::string> cmds;
  // Listings only (add_listing_flags()): every process, not only what the
  // user ran; one repository.
  bool all = false;
  std::string repo;
  bool listing = false;
};

void add_window_flags(CLI::App& app, WindowFlags& flags);

// --cmd alone (for commands with windows of their own, `compare`): the
// display name or cmd_name, several as --cmd a,b or --cmd a --cmd b.
void add_cmd_option(CLI::App& app, std::vector<std::string>& cmds);

// --all alone: every git process, not only what the user ran.
void add_all_flag(CLI::App& app, bool& all);

// --all and --repo, for the listings (`sessions`, `top`, `stats`), which
// show what the user ran unless --all.
void add_listing_flags(CLI::App& app, WindowFlags& flags);

// A --repo value that is a path (it holds a `/` or starts with `.`) made
// absolute, as git reports worktrees; empty for a name.
[[nodiscard]] std::string repo_path_of(const std::string& repo);

// The window the flags describe, "now" being the current time. Throws
// CommandError for an unreadable --since (CLI11 has checked it already).
[[nodiscard]] Window to_window(const WindowFlags& flags);

}  // namespace trace2d::ctl
