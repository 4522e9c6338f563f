// trace2ctl tree SID|ROOT: a process and its descendants, across sessions,
// each with its regions and children nested and timed, like a call tree.

#include <memory>
#include <optional>
#include <string>

#include "model/process_tree.hpp"
#include "model/tree_filter.hpp"
#include "model/tree_loader.hpp"
#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/query/database.hpp"
#include "db/read_transaction.hpp"
#include "ctl/render/tree_json.hpp"
#include "ctl/render/tree_text.hpp"

namespace trace2d::ctl {
namespace {

struct TreeOptions {
  std::string root;
  std::optional<int> depth;
  std::optional<int> region_depth;
  std::optional<double> min_ms;
  bool no_times = false;
  bool sids = false;
};

void run_tree(const Context& ctx, const TreeOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const std::string root = model::normalise_root(options.root);
  std::vector<model::ProcessRows> rows;
  {
    const db::ReadTransaction snapshot(db);
    rows = model::load_process_rows(db, root);
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
  render::print_tree_text(ctx.out, tree, {!options.no_times, options.sids});
}

}  // namespace

Command add_tree_command(CLI::App& cli) {
  auto options = std::make_shared<TreeOptions>();
  CLI::App* app = cli.add_subcommand(
      "tree", "Show a process tree: the process, its regions, and the child processes it ran, nested and timed");
  app->add_option("sid", options->root,
                  "A session's SID, or a SID prefix with sessions under it (a GIT_TRACE2_PARENT_SID such as "
                  "'ci-job 42'): shows every session below it")
      ->required();
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
  return {app, [options](const Context& ctx) { run_tree(ctx, *options); }};
}

}  // namespace trace2d::ctl
