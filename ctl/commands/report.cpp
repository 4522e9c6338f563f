// trace2ctl report --html FILE: a self-contained HTML page for a person:
// what they ran (per command, per repository), what failed and why with
// each failure's tree, what got slower (compare), what to change (advice),
// and flame charts of the slowest process trees (docs/reports.md).
//
// This file gathers the data from the queries, the analysis and the advice
// rules, and hands the render layer plain values (ctl/render/html_report.hpp).

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>

#include "ctl/advice/advice.hpp"
#include "ctl/analysis/population_comparison.hpp"
#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/commands/session_columns.hpp"
#include "ctl/commands/window_flags.hpp"
#include "ctl/output/display.hpp"
#include "ctl/output/file_output.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/analysis_queries.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/failed.hpp"
#include "ctl/query/time_filter.hpp"
#include "ctl/query/time_shares.hpp"
#include "ctl/render/describe.hpp"
#include "ctl/render/html_report.hpp"
#include "ctl/render/tree_text.hpp"
#include "db/read_transaction.hpp"
#include "db/sqlite.hpp"
#include "model/process_tree.hpp"
#include "model/tree_filter.hpp"
#include "model/tree_loader.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

constexpr int k_default_trees = 5;
// Every list on the page is bounded, whatever the database holds: the
// commands and repositories shown, the latest failed runs (each with its
// tree, of which a session's first k_failed_tree_events events are read and
// the first k_failed_tree_lines lines shown), the rows of the comparison and
// the findings.
constexpr std::size_t k_summary_rows = 100;
constexpr int k_failed_rows = 25;
constexpr std::int64_t k_failed_tree_events = 2000;
constexpr std::size_t k_failed_tree_lines = 60;
constexpr std::size_t k_tree_line_bytes = 400;
constexpr std::size_t k_regression_rows = 40;
constexpr std::size_t k_advice_items = 20;
constexpr std::size_t k_advice_sids = 3;

// As `trace2ctl advice` by default, when the report has no --since.
constexpr const char* k_advice_since = "-7d";
constexpr int k_advice_min_runs = 3;

struct ReportOptions {
  std::string html;
  WindowFlags window;
  int limit = k_default_trees;
  std::optional<double> min_ms;
};

std::string describe_window(const Window& window) {
  std::string text = window.since ? "sessions since " + display_time(*window.since) : std::string("all sessions");
  if (window.until) {
    text += " until " + display_time(*window.until);
  }
  for (std::size_t i = 0; i < window.cmds.size(); ++i) {
    text += (i == 0 ? " of command " : ", ") + window.cmds[i];
  }
  if (!window.repo.empty()) {
    text += " in repository " + window.repo;
  }
  return text;
}

std::size_t column_of(const ResultSet& result, std::string_view name) {
  const auto at = std::find(result.columns.begin(), result.columns.end(), name);
  if (at == result.columns.end()) {
    throw std::logic_error("report: no column " + std::string(name) + " in the query's result");
  }
  return static_cast<std::size_t>(at - result.columns.begin());
}

std::string text_of(const Value& value) {
  const auto* text = std::get_if<std::string>(&value);
  return text != nullptr ? *text : std::string();
}

std::int64_t int_of(const Value& value) {
  const auto* number = std::get_if<std::int64_t>(&value);
  return number != nullptr ? *number : 0;
}

std::optional<double> seconds_of(const Value& value) {
  if (const auto* real = std::get_if<double>(&value)) {
    return *real;
  }
  if (const auto* number = std::get_if<std::int64_t>(&value)) {
    return static_cast<double>(*number);
  }
  return std::nullopt;
}

// grouped_stats() in seconds, as the page's rows.
render::Summary summary_of(const ResultSet& stats, std::string_view key) {
  const std::size_t name = column_of(stats, key);
  const std::size_t runs = column_of(stats, "runs");
  const std::size_t failed = column_of(stats, "failures");
  const std::size_t incomplete = column_of(stats, "incomplete");
  const std::size_t median = column_of(stats, "p50_elapsed");
  const std::size_t p90 = column_of(stats, "p90_elapsed");
  const std::size_t slowest = column_of(stats, "max_elapsed");
  const std::size_t total = column_of(stats, "total_elapsed");
  render::Summary summary;
  for (const Row& row : stats.rows) {
    if (summary.rows.size() == k_summary_rows) {
      ++summary.more;
      continue;
    }
    render::SummaryRow out;
    out.name = std::holds_alternative<Null>(row[name]) ? std::string("-") : cell_text(row[name]);
    out.runs = int_of(row[runs]);
    out.failed = int_of(row[failed]);
    out.incomplete = int_of(row[incomplete]);
    out.median = seconds_of(row[median]);
    out.p90 = seconds_of(row[p90]);
    out.slowest = seconds_of(row[slowest]);
    out.total = seconds_of(row[total]);
    summary.rows.push_back(std::move(out));
  }
  return summary;
}

// Worktrees by the fewest last components that tell them apart, as the
// listings show them, the whole path on hover.
void shorten_worktrees(render::Summary& repositories) {
  std::set<std::string> paths;
  for (const render::SummaryRow& row : repositories.rows) {
    if (row.name.starts_with('/')) {
      paths.insert(row.name);
    }
  }
  const std::map<std::string, std::string> shortest = shortest_unique_paths(paths);
  for (render::SummaryRow& row : repositories.rows) {
    if (const auto found = shortest.find(row.name); found != shortest.end()) {
      row.full_name = row.name;
      row.name = found->second;
    }
  }
}

// `trace2ctl tree`'s text of a run, at most k_failed_tree_lines lines.
void describe_failed_tree(db::Database& db, render::FailedRun& run) {
  model::LoadOptions load;
  load.max_events_per_session = k_failed_tree_events;
  load.errors = true;  // a failed process shows its first error, as `tree` does
  std::vector<model::ProcessRows> rows = model::load_process_rows(db, run.sid, load);
  if (rows.empty()) {
    run.tree_note = "Its tree is not in the database.";
    return;
  }
  std::ostringstream text;
  // What one user stored must not cost everyone the report (SQL errors, a
  // timeout among them, still end the command).
  try {
    const model::ProcessTree tree = model::build_process_tree(run.sid, std::move(rows));
    render::print_tree_text(text, tree, {});
  } catch (const std::exception& e) {
    run.tree_note = std::string("Its tree could not be built: ") + e.what();
    return;
  }
  const std::string whole = text.str();
  std::size_t lines = 0;
  std::size_t more = 0;
  for (std::size_t at = 0; at < whole.size();) {
    const std::size_t end = std::min(whole.find('\n', at), whole.size());
    if (lines == k_failed_tree_lines) {
      ++more;
    } else {
      std::string line = whole.substr(at, std::min(end - at, k_tree_line_bytes));
      if (end - at > k_tree_line_bytes) {
        while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80) {
          line.pop_back();  // never cut inside a UTF-8 sequence
        }
        if (!line.empty() && static_cast<unsigned char>(line.back()) >= 0xC0) {
          line.pop_back();
        }
        line += "\xE2\x80\xA6";
      }
      run.tree_text += line + "\n";
      ++lines;
    }
    at = end + 1;
  }
  if (more > 0) {
    run.tree_note = std::to_string(more) + " more lines: `trace2ctl tree " + run.sid + "` shows them all.";
  }
}

std::vector<render::FailedRun> failed_runs(db::Database& db, const Window& window) {
  ResultSet failed = failed_sessions(db, window, k_failed_rows);
  present_failure_reason(failed);  // why each failed, as `sessions --failed` says
  const std::size_t started = column_of(failed, "start_time");
  const std::size_t command = column_of(failed, "command");
  const std::size_t reason = column_of(failed, "reason");
  const std::size_t elapsed = column_of(failed, "elapsed_ms");
  const std::size_t argv = column_of(failed, "argv");
  const std::size_t sid = column_of(failed, "sid");
  std::vector<render::FailedRun> runs;
  for (const Row& row : failed.rows) {
    render::FailedRun run;
    run.started = display_time(text_of(row[started]));
    run.command = text_of(row[command]);
    run.reason = text_of(row[reason]);
    if (const auto ms = seconds_of(row[elapsed])) {
      run.elapsed = *ms / 1000;
    }
    run.command_line = render::join_argv(model::parse_string_array(text_of(row[argv])));
    run.sid = text_of(row[sid]);
    describe_failed_tree(db, run);
    runs.push_back(std::move(run));
  }
  return runs;
}

// "2026-11-20 18:05 CET" of a stored time, as the tables show times
// (local, or --utc).
std::string minute_of(const std::optional<std::string>& time) {
  return time ? display_minute(*time) : "?";
}

// `trace2ctl compare` with its defaults, ending where the report's window
// ends (or now).
render::Regressions regressions(db::Database& db, const ReportOptions& options, const Window& window) {
  const std::int64_t now = proto::unix_now_us();
  std::int64_t until = now;
  if (!options.window.until.empty()) {
    until = parse_time(options.window.until, now).value_or(now);
  }
  CompareRequest request;
  request.baseline.window.since = time_as_text(until - k_default_target_us - k_default_baseline_us);
  request.baseline.window.until = time_as_text(until - k_default_target_us);
  request.target.window.since = request.baseline.window.until;
  request.target.window.until = time_as_text(until);
  request.commands = window.cmds;
  if (!window.repo.empty()) {
    const std::string repo = window.repo_path.empty() ? window.repo : window.repo_path;
    request.baseline.repo = repo;
    request.target.repo = repo;
  }
  request.detail = DetailScope::changed;
  const CompareThresholds& t = request.thresholds;

  render::Regressions out;
  out.baseline = minute_of(request.baseline.window.since) + " .. " + minute_of(request.baseline.window.until);
  out.target = minute_of(request.target.window.since) + " .. " + minute_of(request.target.window.until);
  out.min_runs = t.min_runs;
  char method[256];
  std::snprintf(method, sizeof method,
                "Slower or faster: a two-sided Mann-Whitney U test at %.2g (Benjamini-Hochberg adjusted p), a change "
                "of at least %.0f ms and %.0f%% of the median before, at least %zu runs a side.",
                t.alpha, t.min_change_seconds * 1000, t.min_change_ratio * 100, t.min_runs);
  out.method = method;
  const CompareResult result = compare_populations(db, request);
  out.baseline_runs = result.baseline_runs;
  out.target_runs = result.target_runs;
  for (const CompareRow& row : result.rows) {
    const SampleComparison& c = row.comparison;
    if (row.kind == RowKind::command) {
      (c.verdict == Verdict::too_few_runs ? out.commands_too_few : out.commands_tested) += 1;
    }
    if (c.verdict != Verdict::slower && c.verdict != Verdict::faster) {
      continue;
    }
    if (out.rows.size() == k_regression_rows) {
      ++out.more;
      continue;
    }
    render::RegressionRow shown;
    shown.command = row.command;
    if (row.kind != RowKind::command) {
      shown.part = std::string(row_kind_name(row.kind)) + " " + row.name;
    }
    shown.baseline_runs = c.baseline.count;
    shown.target_runs = c.target.count;
    shown.baseline_median = c.baseline.p50;
    shown.target_median = c.target.p50;
    if (c.shift) {
      shown.change = c.shift->shift;
      shown.change_low = c.shift->low;
      shown.change_high = c.shift->high;
      if (c.baseline.p50 && *c.baseline.p50 > 0) {
        shown.change_ratio = c.shift->shift / *c.baseline.p50;
      }
    }
    shown.p_adjusted = c.p_adjusted;
    shown.slower = c.verdict == Verdict::slower;
    out.rows.push_back(std::move(shown));
  }
  return out;
}

// `trace2ctl advice` over the report's window (by default, as advice's,
// the last 7 days).
render::Advice advice_findings(db::Database& db, const ReportOptions& options) {
  WindowFlags flags = options.window;
  flags.listing = false;  // advice reads every process, as `trace2ctl advice` does
  if (flags.since.empty()) {
    flags.since = k_advice_since;
  }
  const Window window = to_window(flags);
  render::Advice out;
  out.window = "in " + describe_window(window);
  const std::vector<advice::Finding> findings = advice::find_advice(db, window, {k_advice_min_runs});
  for (const advice::Finding& finding : findings) {
    if (out.items.size() == k_advice_items) {
      ++out.more;
      continue;
    }
    render::AdviceItem item;
    item.rule = finding.rule;
    item.command = finding.command;
    item.finding = finding.finding;
    item.evidence = finding.evidence;
    item.fix = finding.fix;
    item.cannot_see = finding.cannot_see;
    item.sids.assign(finding.sids.begin(),
                     finding.sids.begin() + static_cast<std::ptrdiff_t>(std::min(finding.sids.size(), k_advice_sids)));
    out.items.push_back(std::move(item));
  }
  return out;
}

void run_report(const Context& ctx, const ReportOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  // The optional sections (what got slower, what to change) read weeks of
  // processes: on a large database either may need more than the whole
  // --timeout, and the page must still come out.
  TimeShares shares(db, ctx.global.query_timeout);
  const Window window = to_window(options.window);
  render::HtmlReport report;
  report.database = ctx.global.db_path;
  report.generated_at = display_time(proto::format_utc_timestamp(proto::unix_now_us()));
  report.window = describe_window(window);
  report.all_processes = !window.top_level;
  {
    const db::ReadTransaction snapshot(db);
    report.commands = summary_of(grouped_stats(db, window, {GroupKey::cmd}, Units::seconds), "command");
    report.repositories = summary_of(grouped_stats(db, window, {GroupKey::repo}, Units::seconds), "repository");
    shorten_worktrees(report.repositories);
    report.failed_runs = failed_runs(db, window);
    // Stored data no check foresaw, or more of it than the section's share
    // of --timeout, costs the page one section, said on it (other SQL
    // errors still end the command).
    const auto optional_section = [&shares](std::string_view command, auto& section, const auto& fill) {
      try {
        const std::string left_out = shares.run(command, [&] { section = fill(); });
        if (!left_out.empty()) {
          section = {};
          section.problem = left_out;
        }
      } catch (const db::SqliteError&) {
        throw;
      } catch (const std::exception& e) {
        section.problem = e.what();
      }
    };
    optional_section("compare", report.regressions, [&] { return regressions(db, options, window); });
    optional_section("advice", report.advice, [&] { return advice_findings(db, options); });
    for (const std::string& sid : slowest_roots(db, window, options.limit)) {
      model::LoadOptions load;
      load.max_events_per_session = render::k_report_events_per_session;
      std::vector<model::ProcessRows> rows = model::load_process_rows(db, sid, load);
      // What one user stored must not cost everyone the report: a tree that
      // cannot be built is left out and named (SQL errors, a timeout among
      // them, still end the command).
      try {
        model::ProcessTree tree = model::build_process_tree(sid, std::move(rows));
        if (options.min_ms) {
          model::filter_tree(tree, {*options.min_ms / 1000.0, std::nullopt});
        }
        report.trees.push_back(std::move(tree));
      } catch (const std::exception& e) {
        report.problems.push_back("The tree of " + sid + " was left out: " + e.what());
      }
    }
  }
  for (render::FailedRun& run : report.failed_runs) {
    for (std::size_t i = 0; i < report.trees.size(); ++i) {
      if (report.trees[i].root == run.sid) {
        run.flame_chart = i + 1;
      }
    }
  }
  std::string html;
  render::append_html_report(html, report);
  write_text_file(options.html, html);

  const std::size_t commands = report.commands.rows.size() + report.commands.more;
  if (ctx.global.format == OutputFormat::json) {
    std::string text = "{\"file\":";
    append_json_string(text, output_display_name(options.html));
    text += ",\"bytes\":" + std::to_string(html.size()) + ",\"commands\":" + std::to_string(commands) +
            ",\"failed\":" + std::to_string(report.failed_runs.size()) +
            ",\"regressions\":" + std::to_string(report.regressions.rows.size() + report.regressions.more) +
            ",\"findings\":" + std::to_string(report.advice.items.size() + report.advice.more) + ",\"trees\":[";
    for (std::size_t i = 0; i < report.trees.size(); ++i) {
      text += i > 0 ? "," : "";
      append_json_string(text, report.trees[i].root);
    }
    text += "]}\n";
    ctx.out << text;
    return;
  }
  ctx.out << "wrote " << output_display_name(options.html) << ": " << commands << " commands, "
          << report.trees.size() << " process trees (" << html.size() << " bytes)\n";
  for (const std::string& problem : report.problems) {
    ctx.out << escape_for_terminal(problem) << '\n';
  }
}

}  // namespace

Command add_report_command(CLI::App& cli) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* app = cli.add_subcommand(
      "report",
      "Write one self-contained HTML page: what you ran per command and repository, failed runs with their trees, "
      "regressions, advice, and flame charts of the slowest runs");
  app->add_option("--html", options->html, "The HTML file to write (replaced if it exists)")->required();
  add_window_flags(*app, options->window);
  add_listing_flags(*app, options->window);
  app->add_option("--limit", options->limit, "Draw the N slowest process trees")
      ->check(whole_number_at_least(0))
      ->capture_default_str();
  app->add_option("--min-ms", options->min_ms, "Leave out regions and children shorter than this (ms)")
      ->check(non_negative_number());
  return {app, [options](const Context& ctx) { run_report(ctx, *options); }, nullptr};
}

}  // namespace trace2d::ctl
