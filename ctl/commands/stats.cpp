// trace2ctl stats: counts and elapsed-time percentiles per command (or per
// region, repository, git version, user, nickname, or a combination) over
// a window.

#include <memory>
#include <string>

#include "ctl/commands/command.hpp"
#include "ctl/commands/group_flags.hpp"
#include "ctl/commands/session_columns.hpp"
#include "ctl/commands/window_flags.hpp"
#include "ctl/output/print_result.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/analysis_queries.hpp"
#include "ctl/query/database.hpp"

namespace trace2d::ctl {
namespace {

struct StatsOptions {
  WindowFlags window;
  std::string by = "cmd";
};

void run_stats(const Context& ctx, const StatsOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  Window window = to_window(options.window);
  const Units units = is_machine_format(ctx.global.format) ? Units::seconds : Units::milliseconds;
  if (options.by == "regions") {
    // Regions are git's work wherever it ran: in the processes git started too.
    window.top_level = false;
    print_result(ctx.out, region_stats(db, window, units), ctx.global.format);
    return;
  }
  const std::vector<GroupKey> keys = group_keys(options.by).value_or(std::vector<GroupKey>{GroupKey::cmd});
  ResultSet result = grouped_stats(db, window, keys, units);
  present_session_columns(result, db, ctx.global.format, SidForm::short_form);
  print_result(ctx.out, result, ctx.global.format);
}

}  // namespace

Command add_stats_command(CLI::App& cli) {
  auto options = std::make_shared<StatsOptions>();
  CLI::App* app = cli.add_subcommand(
      "stats",
      "Per command the user ran (--all: every git process): runs, failures, incomplete sessions, p50/p90/p99/max "
      "elapsed (ms)");
  add_window_flags(*app, options->window);
  add_listing_flags(*app, options->window);
  app->add_option("--by", options->by,
                  std::string("cmd (or commands): per command as shown (`submodule`, an alias); regions: per region "
                              "category and label (region_stats); else ") +
                      k_group_help)
      ->check(CLI::Validator(describe_group_error, "BY", "grouping"))
      ->capture_default_str();
  return {app, [options](const Context& ctx) { run_stats(ctx, *options); }, [] { return true; }};
}

}  // namespace trace2d::ctl
