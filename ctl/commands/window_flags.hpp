#pragma once
// --since and --cmd, as `top`, `stats` and `report` take them.

#include <CLI/CLI.hpp>
#include <string>

#include "ctl/query/analysis_queries.hpp"

namespace trace2d::ctl {

struct WindowFlags {
  std::string since;
  std::string until;
  std::string cmd;
};

void add_window_flags(CLI::App& app, WindowFlags& flags);

// The window the flags describe, "now" being the current time. Throws
// CommandError for an unreadable --since (CLI11 has checked it already).
[[nodiscard]] Window to_window(const WindowFlags& flags);

}  // namespace trace2d::ctl
