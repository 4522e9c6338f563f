// trace2ctl tree SID|ROOT: a process and its descendants, across sessions,
// each with its regions and children nested and timed, like a call tree.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "model/process_tree.hpp"
#include "model/tree_filter.hpp"
#include "model/tree_loader.hpp"
#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/commands/owner_option.hpp"
#include "ctl/commands/sid_argument.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/sid.hpp"
#include "db/read_transaction.hpp"
#include "ctl/render/tree_json.hpp"
#include "ctl/render/tree_text.hpp"

namespace trace2d::ctl {
namespace {

struct TreeOptions {
  SidArgument root;
  std::optional<int> depth;
  std::optional<int> region_depth;
  std::optional<double> min_ms;
  bool no_times = false;
  bool sids = false;
  std::optional<std::int64_t> uid;
  // Of each session, what began within its first this many events (0: all):
  // a session with 300,000 children took 48 s and 489 MB to show whole.
  std::int64_t max_events = k_default_max_events;
  static constexpr std::int64_t k_default_max_events = 20000;
};

void run_tree(const Context& ctx, const TreeOptions& options) {
  require_table_or_json(ctx, "tree");
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  std::string root;
  std::vector<model::ProcessRows> rows;
  {
    const db::ReadTransaction snapshot(db);
    root = resolve_sid_argument(db, options.root, PrefixRoot::allow);
    model::LoadOptions load = load_options_for(options.uid);
    load.errors = true;  // a failed process shows its first error
    if (options.max_events > 0) {
      load.max_events_per_session = options.max_events;
    }
    rows = model::load_process_rows(db, root, load);
  }
  if (rows.empty()) {
    throw CommandError("no session with sid '" + root + "' (nor any under it)");
  }
  model::ProcessTree tree = model::build_process_tree(root, std::move(rows), {options.depth});
  model::FilterOptions filter;
  filter.max_region_depth = options.region_depth;
  if (options.min_ms) {
    filter.min_seconds = *options.min_ms / 1000.0;
  }
  model::filter_tree(tree, filter);

  if (ctx.global.format == OutputFormat::json) {
    std::string text;
    render::append_tree_json(text, tree);
    text.push_back('\n');
    ctx.out << text;
    return;
  }
  render::print_tree_text(ctx.out, tree, {!options.no_times, options.sids, ctx.global.colour});
}

}  // namespace

Command add_tree_command(CLI::App& cli) {
  auto options = std::make_shared<TreeOptions>();
  CLI::App* app = cli.add_subcommand(
      "tree", "Show a process tree: the process, its regions, and the child processes it ran, nested and timed");
  add_sid_argument(*app, options->root,
                   "A session's SID, or a SID prefix with sessions under it (a GIT_TRACE2_PARENT_SID such as "
                   "'ci-job 42'): shows every session below it; or a short SID as `sessions` prints it",
                   true);
  app->add_option("--depth", options->depth,
                  "Show child processes at most N levels below the SID (0: the process alone, its child "
                  "entries not expanded)")
      ->check(whole_number_at_least(0));
  app->add_option("--region-depth", options->region_depth,
                  "Show at most N levels of regions per thread (0: none; children move up to their process)")
      ->check(whole_number_at_least(0));
  app->add_option("--min-ms", options->min_ms,
                  "Hide regions, children and processes shorter than this many milliseconds (unless they hold "
                  "something longer)")
      ->check(non_negative_number());
  app->add_flag("--no-times", options->no_times, "Leave out the time columns (output that diffs across runs)");
  app->add_flag("--sids", options->sids, "Print each process's SID");
  add_owner_option(*app, options->uid);
  app->add_option("--max-events", options->max_events,
                  "Of each session, show what began within its first N events (0: all); a session cut so says "
                  "how many events it left out")
      ->check(whole_number_at_least(0))
      ->capture_default_str();
  return {app, [options](const Context& ctx) { run_tree(ctx, *options); }, [] { return true; }};
}

}  // namespace trace2d::ctl
