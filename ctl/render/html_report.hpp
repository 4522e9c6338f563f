#pragma once
// `trace2ctl report --html`: one self-contained HTML page (inline CSS and
// SVG, no scripts, no fonts or images to fetch: it opens offline and can be
// mailed or attached to a CI run) with
//   - the per-command summary (command_stats over the window),
//   - the latest failed runs (non-zero exit, signal, or incomplete),
//   - a list of the slowest process trees, and
//   - for each of them, a flame chart: processes, regions, child processes
//     and threads as nested bars along one time axis, labelled where the
//     bar is wide enough, with a tooltip (<title>) on every bar.

#include <cstdint>
#include <string>
#include <vector>

#include "model/process_tree.hpp"
#include "ctl/output/result_set.hpp"

namespace trace2d::ctl::render {

// The events of one session a report reads: of a session with more, what
// began after them is not drawn, and the page says how many were left out
// (with the flame chart's own bound, k_max_flame_bars, a huge session costs
// the report a bounded time, memory and page: docs/reports.md).
inline constexpr std::int64_t k_report_events_per_session = 20000;

struct HtmlReport {
  std::string database;      // shown in the header
  std::string generated_at;  // UTC
  std::string window;        // "all sessions", "since 2026-...", ...
  ResultSet command_stats;   // as command_stats() gives it in milliseconds
  ResultSet failed_runs;     // as failed_sessions() gives it, argv as a command line
  std::vector<model::ProcessTree> trees;  // slowest first
  std::vector<std::string> problems;         // trees left out, and why
};

void append_html_report(std::string& out, const HtmlReport& report);

}  // namespace trace2d::ctl::render
