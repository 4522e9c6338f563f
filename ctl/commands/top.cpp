// trace2ctl top: the slowest sessions, or the slowest regions, in a window.

#include <memory>
#include <string>

#include "ctl/commands/command.hpp"
#include "ctl/commands/group_flags.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/commands/session_columns.hpp"
#include "ctl/commands/window_flags.hpp"
#include "ctl/output/print_result.hpp"
#include "ctl/query/failed.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/analysis_queries.hpp"
#include "ctl/query/database.hpp"

namespace trace2d::ctl {
namespace {

constexpr int k_default_top_rows = 20;

struct TopOptions {
  WindowFlags window;
  int limit = k_default_top_rows;
  std::string by = "commands";
  bool full_sid = false;
};

void run_top(const Context& ctx, const TopOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  Window window = to_window(options.window);
  const Units units = is_machine_format(ctx.global.format) ? Units::seconds : Units::milliseconds;
  ResultSet result;
  if (options.by == "regions") {
    // Regions are git's work wherever it ran: in the processes git started too.
    window.top_level = false;
    result = slowest_regions(db, window, options.limit, units);
  } else if (const auto keys = group_keys(options.by)) {
    result = slowest_per_group(db, window, *keys, options.limit, units);
  } else {
    result = slowest_sessions(db, window, options.limit, units);
  }
  present_session_columns(result, db, ctx.global.format, options.full_sid ? SidForm::whole : SidForm::short_form);
  TableStyle style;
  style.limits = {{"argv", k_min_cut_chars}, {"msg", k_min_cut_chars}};
  if (options.by != "regions") {
    style.alert = failed_row(result);
    style.colour = ctx.global.colour;
  }
  print_result(ctx.out, result, ctx.global.format, style);
}

}  // namespace

Command add_top_command(CLI::App& cli) {
  auto options = std::make_shared<TopOptions>();
  CLI::App* app = cli.add_subcommand(
      "top", "The slowest runs of what the user ran (--all: every git process), or regions, slowest first");
  add_window_flags(*app, options->window);
  add_listing_flags(*app, options->window);
  app->add_option("--limit", options->limit, "Show at most N rows")
      ->check(whole_number_at_least(1))
      ->capture_default_str();
  app->add_option("--by", options->by,
                  std::string("commands: finished sessions by elapsed; regions: closed regions by elapsed, with their "
                              "session (of every process); else the slowest run of each ") +
                      k_group_help + ", with how many ran")
      ->check(CLI::Validator(describe_group_error, "BY", "grouping"))
      ->capture_default_str();
  app->add_flag("--full-sid", options->full_sid, "Print whole SIDs in the table (by default short SIDs, as `sessions`)");
  return {app, [options](const Context& ctx) { run_top(ctx, *options); }, [] { return true; }};
}

}  // namespace trace2d::ctl
