// trace2ctl report --html FILE: a self-contained HTML page with the
// per-command summary and flame charts of the slowest process trees.

#include <algorithm>
#include <exception>
#include <variant>
#include <memory>
#include <string>

#include "model/process_tree.hpp"
#include "model/tree_filter.hpp"
#include "model/tree_loader.hpp"
#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/commands/window_flags.hpp"
#include "ctl/output/file_output.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/analysis_queries.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/failed.hpp"
#include "db/read_transaction.hpp"
#include "ctl/render/describe.hpp"
#include "ctl/render/html_report.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

constexpr int k_default_trees = 5;
// The report lists this many of the latest failed runs.
constexpr int k_failed_rows = 50;

struct ReportOptions {
  std::string html;
  WindowFlags window;
  int limit = k_default_trees;
  std::optional<double> min_ms;
};

std::string describe_window(const Window& window) {
  std::string text = window.since ? "sessions since " + *window.since : std::string("all sessions");
  if (window.until) {
    text += " until " + *window.until;
  }
  for (std::size_t i = 0; i < window.cmds.size(); ++i) {
    text += (i == 0 ? " of command " : ", ") + window.cmds[i];
  }
  return text;
}

void run_report(const Context& ctx, const ReportOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const Window window = to_window(options.window);
  render::HtmlReport report;
  report.database = ctx.global.db_path;
  report.generated_at = proto::format_utc_timestamp(proto::unix_now_us());
  report.window = describe_window(window);
  {
    const db::ReadTransaction snapshot(db);
    report.command_stats = command_stats(db, window, Units::milliseconds);
    report.failed_runs = failed_sessions(db, window, k_failed_rows);
    present_failure_reason(report.failed_runs);  // why each failed, as `sessions --failed` says
    // A command line reads better than its JSON array.
    const auto& columns = report.failed_runs.columns;
    const auto argv_column = static_cast<std::size_t>(std::find(columns.begin(), columns.end(), "argv") - columns.begin());
    for (Row& row : report.failed_runs.rows) {
      if (const auto* json = std::get_if<std::string>(&row.at(argv_column))) {
        row[argv_column] = render::join_argv(model::parse_string_array(*json));
      }
    }
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
  std::string html;
  render::append_html_report(html, report);
  write_text_file(options.html, html);

  if (ctx.global.format == OutputFormat::json) {
    std::string text = "{\"file\":";
    append_json_string(text, output_display_name(options.html));
    text += ",\"bytes\":" + std::to_string(html.size()) +
            ",\"commands\":" + std::to_string(report.command_stats.rows.size()) + ",\"trees\":[";
    for (std::size_t i = 0; i < report.trees.size(); ++i) {
      text += i > 0 ? "," : "";
      append_json_string(text, report.trees[i].root);
    }
    text += "]}\n";
    ctx.out << text;
    return;
  }
  ctx.out << "wrote " << output_display_name(options.html) << ": " << report.command_stats.rows.size() << " commands, "
          << report.trees.size() << " process trees (" << html.size() << " bytes)\n";
  for (const std::string& problem : report.problems) {
    ctx.out << escape_for_terminal(problem) << '\n';
  }
}

}  // namespace

Command add_report_command(CLI::App& cli) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* app = cli.add_subcommand(
      "report", "Write one self-contained HTML page: per-command summary and flame charts of the slowest runs");
  app->add_option("--html", options->html, "The HTML file to write (replaced if it exists)")->required();
  add_window_flags(*app, options->window);
  app->add_option("--limit", options->limit, "Draw the N slowest process trees")
      ->check(whole_number_at_least(0))
      ->capture_default_str();
  app->add_option("--min-ms", options->min_ms, "Leave out regions and children shorter than this (ms)")
      ->check(non_negative_number());
  return {app, [options](const Context& ctx) { run_report(ctx, *options); }, nullptr};
}

}  // namespace trace2d::ctl
