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
#include "ctl/query/database.hpp"
#include "ctl/query/sid.hpp"
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
  bool last = false;
  std::string cmd;
  std::optional<std::int64_t> uid;
  // Of each session, what began within its first this many events (0: all):
  // a session with 300,000 children took 48 s and 489 MB to show whole.
  std::int64_t max_events = k_default_max_events;
  static constexpr std::int64_t k_default_max_events = 20000;
};

// --last [--cmd C]: the latest top-level session (of that command).
std::string latest_root(db::Database& db, const std::string& cmd) {
  // A session is the top of its tree when it has no parent session of its
  // owner in the database, or was re-rooted for ownership (tree_sid);
  // with --cmd, the latest of that command, top-level or not
  // (`tree --last --cmd fetch` shows a fetch even when a script ran it).
  db::Statement stmt = db.prepare(
      cmd.empty() ? std::string("SELECT s.sid FROM sessions s WHERE s.parent_sid IS NULL OR s.tree_sid = s.sid"
                                " OR NOT EXISTS (SELECT 1 FROM sessions p"
                                " WHERE p.sid = s.parent_sid AND p.peer_uid IS s.peer_uid)"
                                " ORDER BY s.first_received DESC, s.id DESC LIMIT 1")
                  : std::string("SELECT s.sid FROM sessions s WHERE (s.cmd_name = ?1 OR t2_display_name(s.cmd_name, s.argv) = ?1)"
                                " ORDER BY s.first_received DESC, s.id DESC LIMIT 1"));
  if (!cmd.empty()) {
    stmt.bind_text(1, cmd);
  }
  if (!stmt.step()) {
    throw CommandError(cmd.empty() ? std::string("the database holds no sessions yet")
                                   : "no session of command '" + cmd + "'");
  }
  return std::string(stmt.column_text(0));
}

void run_tree(const Context& ctx, const TreeOptions& options) {
  require_table_or_json(ctx, "tree");
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  std::string root;
  std::vector<model::ProcessRows> rows;
  {
    const db::ReadTransaction snapshot(db);
    if (options.last) {
      root = latest_root(db, options.cmd);
    } else if (options.root.empty()) {
      throw CommandError("give a SID, or --last (with --cmd NAME for the latest run of a command)");
    } else {
      root = resolve_sid(db, model::normalise_root(options.root), PrefixRoot::allow);
    }
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
  CLI::Option* sid = app->add_option("sid", options->root,
                  "A session's SID, or a SID prefix with sessions under it (a GIT_TRACE2_PARENT_SID such as "
                  "'ci-job 42'): shows every session below it; or a short SID as `sessions` prints it");
  app->add_flag("--last", options->last, "The latest process tree (top-level session) instead of a SID")
      ->excludes(sid);
  app->add_option("--cmd", options->cmd, "With --last: the latest session of this command (cmd_name, e.g. 'fetch')")
      ->needs("--last");
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
