#pragma once
// `trace2ctl report --html`: one self-contained HTML page (inline CSS and
// SVG, no scripts, no fonts or images to fetch: it opens offline and can be
// mailed or attached to a CI run) that reads from the top as a person asks:
//   - what you ran: per command (display names, top-level sessions unless
//     --all) and per repository, with human headers and units,
//   - what failed and why, each failed run with its process tree,
//   - what got slower (`trace2ctl compare`'s answer) and what to change
//     (`trace2ctl advice`'s findings),
//   - the slowest process trees as flame charts: processes, regions, child
//     processes and threads as nested bars along one time axis, with a
//     legend of the colours and a tooltip (<title>) on every bar.
//
// The render layer sees plain data (ctl/commands/report.cpp builds it from
// the queries, compare and advice), so it depends on no analysis type.
// Every list on the page is bounded (docs/reports.md): what one user
// stored cannot make the page unusable.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/process_tree.hpp"

namespace trace2d::ctl::render {

// The events of one session a report reads: of a session with more, what
// began after them is not drawn, and the page says how many were left out
// (with the flame chart's own bound, k_max_flame_bars, a huge session costs
// the report a bounded time, memory and page: docs/reports.md).
inline constexpr std::int64_t k_report_events_per_session = 20000;

// One row of a summary: a command (or a repository) and its runs.
struct SummaryRow {
  std::string name;
  std::string full_name;  // shown on hover when `name` is shortened; empty: same
  std::int64_t runs = 0;
  std::int64_t failed = 0;
  std::int64_t incomplete = 0;
  std::optional<double> median;  // seconds
  std::optional<double> p90;
  std::optional<double> slowest;
  std::optional<double> total;
};

struct Summary {
  std::vector<SummaryRow> rows;  // most runs first, at most the report's bound
  std::size_t more = 0;          // rows past the bound, not shown
};

// A failed run: why, and its process tree as `trace2ctl tree` draws it.
struct FailedRun {
  std::string started;
  std::string command;
  std::string reason;        // the first error message, the signal, "exit 128", "incomplete"
  std::string command_line;  // argv as a shell would read it
  std::string sid;
  std::optional<double> elapsed;
  std::string tree_text;     // `trace2ctl tree`'s text, cut to a bounded size
  std::string tree_note;     // what was cut, or why there is no tree
  std::optional<std::size_t> flame_chart;  // 1-based index into HtmlReport::trees when it is drawn there
};

// One row of `trace2ctl compare`: a command, or a region or child process
// of one; its verdict slower or faster.
struct RegressionRow {
  std::string command;
  std::string part;  // "region index:refresh", "child hook:pre-commit"; empty for the command
  std::size_t baseline_runs = 0;
  std::size_t target_runs = 0;
  std::optional<double> baseline_median;  // seconds
  std::optional<double> target_median;
  std::optional<double> change;  // seconds, target minus baseline (Hodges-Lehmann)
  std::optional<double> change_low;
  std::optional<double> change_high;
  std::optional<double> change_ratio;  // of the baseline median
  double p_adjusted = 1;
  bool slower = true;
};

struct Regressions {
  std::string baseline;  // "2026-10-23 .. 2026-11-20"
  std::string target;
  std::size_t baseline_runs = 0;
  std::size_t target_runs = 0;
  std::size_t commands_tested = 0;   // commands with enough runs on both sides
  std::size_t commands_too_few = 0;  // commands without
  std::size_t min_runs = 0;
  std::string method;               // one sentence: the test and thresholds
  std::vector<RegressionRow> rows;  // slower first, at most the report's bound
  std::size_t more = 0;
  std::string problem;  // set when the comparison could not be made
};

// One finding of `trace2ctl advice`.
struct AdviceItem {
  std::string rule;
  std::string command;
  std::string finding;
  std::string evidence;
  std::string fix;
  std::string cannot_see;
  std::vector<std::string> sids;  // a few of the runs that show it
};

struct Advice {
  std::string window;  // "since 2026-11-20 ..."
  std::vector<AdviceItem> items;
  std::size_t more = 0;
  std::string problem;  // set when the rules could not run
};

struct HtmlReport {
  std::string database;      // shown in the header
  std::string generated_at;  // UTC
  std::string window;        // "all sessions", "since 2026-...", ...
  bool all_processes = false;  // --all: internal processes too
  Summary commands;
  Summary repositories;
  std::vector<FailedRun> failed_runs;  // newest first
  Regressions regressions;
  Advice advice;
  std::vector<model::ProcessTree> trees;  // slowest first
  std::vector<std::string> problems;      // trees left out, and why
};

void append_html_report(std::string& out, const HtmlReport& report);

// Seconds for reading: "4.2 ms", "380 ms", "2.41 s", "95 s", "12 min";
// empty when unknown. A change keeps its sign with `signed_value`.
[[nodiscard]] std::string human_duration(std::optional<double> seconds, bool signed_value = false);

// The page's style sheet (inline in every report), for pages that show
// a report's parts alone, as the layout tests do.
[[nodiscard]] std::string_view report_style();

}  // namespace trace2d::ctl::render
