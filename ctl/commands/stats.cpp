// trace2ctl stats: per command (or per region) counts and elapsed-time
// percentiles, the `command_stats` (`region_stats`) view over a window.

#include <memory>
#include <string>

#include "ctl/commands/command.hpp"
#include "ctl/commands/window_flags.hpp"
#include "ctl/output/print_result.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/analysis_queries.hpp"
#include "ctl/query/database.hpp"

namespace trace2d::ctl {
namespace {

struct StatsOptions {
  WindowFlags window;
  std::string by = "commands";
};

void run_stats(const Context& ctx, const StatsOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const Window window = to_window(options.window);
  const Units units = is_machine_format(ctx.global.format) ? Units::seconds : Units::milliseconds;
  const ResultSet result =
      options.by == "regions" ? region_stats(db, window, units) : command_stats(db, window, units);
  print_result(ctx.out, result, ctx.global.format);
}

}  // namespace

Command add_stats_command(CLI::App& cli) {
  auto options = std::make_shared<StatsOptions>();
  CLI::App* app = cli.add_subcommand(
      "stats", "Per command: runs, failures, incomplete sessions, p50/p90/p99/max elapsed (ms)");
  add_window_flags(*app, options->window);
  app->add_option("--by", options->by,
                  "commands: per cmd_name (command_stats); regions: per region category and label (region_stats)")
      ->check(CLI::IsMember({"commands", "regions"}))
      ->capture_default_str();
  return {app, [options](const Context& ctx) { run_stats(ctx, *options); }, [] { return true; }};
}

}  // namespace trace2d::ctl
