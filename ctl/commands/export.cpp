// trace2ctl export [--format chrome|otlp-json] SID|ROOT|--last: a process tree as a
// trace file for ui.perfetto.dev or chrome://tracing, or as OTLP/JSON (one
// ExportTraceServiceRequest per line, as the OpenTelemetry Collector's
// otlpjsonfile receiver reads it: the spans the daemon's exporter sends).

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/command_percentiles.hpp"
#include "model/process_tree.hpp"
#include "model/tree_loader.hpp"
#include "ctl/commands/command.hpp"
#include "ctl/commands/window_flags.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/commands/owner_option.hpp"
#include "ctl/commands/sid_argument.hpp"
#include "ctl/output/file_output.hpp"
#include "ctl/output/json.hpp"
#include "ctl/query/database.hpp"
#include "db/read_transaction.hpp"
#include "ctl/render/chrome_trace.hpp"
#include "otlp/export_rules.hpp"
#include "otlp/otlp_json.hpp"
#include "otlp/resource.hpp"
#include "otlp/span_builder.hpp"

namespace trace2d::ctl {
namespace {

struct ExportOptions {
  SidArgument root;
  std::string format = "chrome";
  std::string output;
  std::optional<int> depth;
  WindowFlags window;  // otlp-json without a SID: every tree in the window
  // otlp-json: the rules the daemon's [otlp] section sets (docs/otlp.md).
  std::string detail = "verbose";
  std::vector<std::string> rules;
  std::string nickname_key{otlp::k_default_nickname_key};
  std::vector<std::string> important_data;
  // trace2receiver's filter settings, as [otlp] has them.
  std::string ruleset_key;
  std::vector<std::string> nicknames;
  std::vector<std::string> rulesets;
  std::vector<std::string> summary_messages;
  std::vector<std::string> summary_regions;
  std::vector<std::string> important_events;
  bool pii_user_name = false;
  bool pii_host_name = false;
  bool no_host_name = false;  // [otlp] resource_host_name = false: no host.name on the resource
  // Detail by outcome, as [otlp] outcome_detail, slow_ms, slow_p99.
  std::string outcome_detail;
  std::int64_t slow_ms = 0;
  bool slow_p99 = false;
  std::optional<std::int64_t> uid;
};

// The rules as the options give them; the p99s (--slow-p99) from `db`.
otlp::ExportRules rules_of(const ExportOptions& options, db::Database& db) {
  otlp::ExportRules rules;
  const auto level = otlp::parse_detail_level(options.detail);
  if (!level) {
    throw CommandError("--detail '" + options.detail + "' is not drop, summary, process or verbose");
  }
  rules.default_level = *level;
  for (const std::string& rule : options.rules) {
    try {
      rules.add_rule(rule);
    } catch (const std::invalid_argument& e) {
      throw CommandError(std::string("--rule: ") + e.what());
    }
  }
  rules.nickname_key = options.nickname_key;
  for (const std::string& entry : options.important_data) {
    if (const std::string problem = otlp::important_data_problem(entry); !problem.empty()) {
      throw CommandError("--important-data '" + entry + "' " + problem);
    }
    rules.important_data.insert(entry);
  }
  rules.ruleset_key = options.ruleset_key;
  // Each entry checked as [otlp] checks it; the message names the flag.
  const auto add_each = [&rules](const std::vector<std::string>& entries, std::string_view flag,
                                 void (otlp::ExportRules::*add)(std::string_view)) {
    for (const std::string& entry : entries) {
      try {
        (rules.*add)(entry);
      } catch (const std::invalid_argument& e) {
        throw CommandError(std::string(flag) + ": " + e.what());
      }
    }
  };
  add_each(options.nicknames, "--nickname", &otlp::ExportRules::add_nickname);
  add_each(options.rulesets, "--ruleset", &otlp::ExportRules::add_ruleset);
  if (const std::string problem = otlp::undefined_ruleset_problem(options.nicknames, options.rulesets);
      !problem.empty()) {
    throw CommandError("--nickname: " + problem);
  }
  add_each(options.summary_messages, "--summary-message", &otlp::ExportRules::add_summary_message);
  add_each(options.summary_regions, "--summary-region", &otlp::ExportRules::add_summary_region);
  add_each(options.important_events, "--important-event", &otlp::ExportRules::add_important_event);
  rules.pii_user_name = options.pii_user_name;
  rules.pii_host_name = options.pii_host_name;
  if (!options.outcome_detail.empty()) {
    rules.outcome_level = otlp::parse_detail_level(options.outcome_detail);
    if (!rules.outcome_level || *rules.outcome_level == otlp::DetailLevel::drop) {
      throw CommandError("--outcome-detail '" + options.outcome_detail + "' is not summary, process or verbose");
    }
  }
  if (options.slow_ms > 0) {
    rules.slow_seconds = static_cast<double>(options.slow_ms) / 1000.0;
  }
  rules.slow_by_p99 = options.slow_p99;
  if (rules.outcome_level && rules.slow_by_p99) {
    rules.command_p99 = model::command_p99(db);
  }
  return rules;
}

// One process tree as one OTLP/JSON request, on one line; the spans it holds.
std::size_t append_otlp_line(std::string& out, const model::ProcessTree& tree, const otlp::ExportRules& rules,
                             bool host_name) {
  static const otlp::ResourceSettings settings = otlp::resource_settings_from_environment();
  static const otlp::Resource with_host_name = otlp::make_resource(settings);
  static const otlp::Resource without_host_name = [] {
    otlp::ResourceSettings without = settings;
    without.include_host_name = false;
    return otlp::make_resource(without);
  }();
  static const otlp::Scope scope{"trace2d", settings.trace2d_version};
  otlp::TraceBatch batch{host_name ? &with_host_name : &without_host_name, &scope, {}};
  otlp::append_spans(tree, batch.spans, {}, rules);
  otlp::append_json_request(out, batch);
  out += '\n';
  return batch.spans.size();
}

void write_otlp_json(const Context& ctx, const ExportOptions& options, const std::string& lines, std::size_t trees,
                     std::size_t spans) {
  if (options.output.empty() || options.output == "-") {
    ctx.out << lines;
    return;
  }
  write_text_file(options.output, lines);
  if (ctx.global.format == OutputFormat::json) {
    std::string text = "{\"file\":";
    append_json_string(text, output_display_name(options.output));
    text += ",\"format\":\"otlp-json\",\"trees\":" + std::to_string(trees) + ",\"spans\":" + std::to_string(spans) + "}\n";
    ctx.out << text;
  } else {
    ctx.out << "wrote " << spans << " spans of " << trees << (trees == 1 ? " process tree" : " process trees") << " to "
            << output_display_name(options.output) << " (OTLP/JSON)\n";
  }
}

// Every process tree with a session in the window (--since, --until,
// --cmd), oldest first, one request per line.
void export_otlp_window(const Context& ctx, const ExportOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const Window window = to_window(options.window);
  std::string lines;
  std::size_t trees = 0;
  std::size_t spans = 0;
  const db::ReadTransaction snapshot(db);
  // A tree is its top (tree_sid) and owner: a session re-rooted for
  // ownership is a tree of its own, and owners that share a prefix nobody
  // sent have a tree each.
  std::vector<std::pair<std::string, model::Owner>> roots;
  {
    db::Statement select = db.prepare(
        "SELECT coalesce(s.tree_sid, s.root_sid) AS tree, s.peer_uid FROM sessions s WHERE 1 = 1 " +
        window_condition(window) + " GROUP BY tree, s.peer_uid ORDER BY min(s.first_received), tree, s.peer_uid");
    bind_window(select, window);
    while (select.step()) {
      roots.emplace_back(select.column_text(0), model::Owner{select.column_optional_int(1)});
    }
  }
  const otlp::ExportRules rules = rules_of(options, db);
  model::LoadOptions load;
  load.annotations = true;  // data, timers, counters
  load.errors = true;
  load.params = true;
  load.details = true;  // trace2receiver's ancestry, alias, repo set, printf messages
  for (const auto& [root, owner] : roots) {
    load.owner = owner;
    std::vector<model::ProcessRows> rows = model::load_process_rows(db, root, load);
    if (rows.empty()) {
      continue;
    }
    spans += append_otlp_line(lines, model::build_process_tree(root, std::move(rows), {options.depth}), rules,
                              !options.no_host_name);
    ++trees;
  }
  write_otlp_json(ctx, options, lines, trees, spans);
}

void run_export(const Context& ctx, const ExportOptions& options) {
  // With --last, --cmd names the command it looks for, not a window.
  const bool windowed = !options.window.since.empty() || !options.window.until.empty() ||
                        (!options.window.cmds.empty() && !options.root.last);
  if (!given(options.root) || windowed) {
    if (options.format != "otlp-json") {
      throw CommandError("--format chrome exports one tree: name its SID (a short SID as `sessions` prints it), "
                         "or --last (--since, --until and --cmd are for otlp-json)");
    }
    if (given(options.root)) {
      throw CommandError("give a SID (or --last) or --since/--until/--cmd, not both");
    }
    export_otlp_window(ctx, options);
    return;
  }
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const bool otlp_json = options.format == "otlp-json";
  std::string root;
  std::vector<model::ProcessRows> rows;
  std::optional<otlp::ExportRules> rules;
  {
    const db::ReadTransaction snapshot(db);
    if (otlp_json) {
      rules = rules_of(options, db);
    }
    root = resolve_sid_argument(db, options.root, PrefixRoot::allow, options.window.cmds);
    model::LoadOptions load = load_options_for(options.uid);
    load.annotations = true;  // the Chrome trace's annotations; OTLP's data, timers, counters
    load.errors = otlp_json;
    load.params = otlp_json;
    load.details = otlp_json;
    rows = model::load_process_rows(db, root, load);
  }
  if (rows.empty()) {
    throw CommandError("no session with sid '" + root + "' (nor any under it)");
  }
  const model::ProcessTree tree = model::build_process_tree(root, std::move(rows), {options.depth});
  if (otlp_json) {
    std::string line;
    const std::size_t spans = append_otlp_line(line, tree, *rules, !options.no_host_name);
    write_otlp_json(ctx, options, line, 1, spans);
    return;
  }
  std::string trace;
  const render::ChromeTraceStats stats = render::append_chrome_trace(trace, tree);
  if (options.output.empty() || options.output == "-") {
    ctx.out << trace;
    return;
  }
  write_text_file(options.output, trace);
  if (ctx.global.format == OutputFormat::json) {
    std::string text = "{\"file\":";
    append_json_string(text, output_display_name(options.output));
    text += ",\"format\":\"chrome\",\"events\":" + std::to_string(stats.events) +
            ",\"processes\":" + std::to_string(stats.processes) + ",\"untimed\":" + std::to_string(stats.untimed) + "}\n";
    ctx.out << text;
    return;
  }
  ctx.out << "wrote " << stats.events << " trace events for " << stats.processes << " processes to "
          << output_display_name(options.output) << " (open it in ui.perfetto.dev or chrome://tracing)\n";
  if (stats.untimed > 0) {
    ctx.out << stats.untimed << " regions or children without times (brief mode) were left out\n";
  }
}

}  // namespace

Command add_export_command(CLI::App& cli) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* app = cli.add_subcommand(
      "export",
      "Write a process tree as a Chrome Trace Event file (opens in ui.perfetto.dev, chrome://tracing) or as OTLP/JSON");
  add_sid_argument(*app, options->root,
                   "A session's SID, the short SID `sessions` prints, or a SID prefix with sessions under it "
                   "(otlp-json: or every tree in a --since/--until/--cmd window)",
                   false);
  app->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"chrome", "otlp-json"}))
      ->capture_default_str();
  app->add_option("-o,--output", options->output, "Write to this file instead of standard output");
  app->add_option("--depth", options->depth, "Include child processes at most N levels below the SID")
      ->check(whole_number_at_least(0));
  add_window_flags(*app, options->window);
  app->add_option("--detail", options->detail,
                  "otlp-json: detail level of commands no --rule names (drop, summary, process, verbose)")
      ->capture_default_str();
  app->add_option("--rule", options->rules,
                  "otlp-json: a command's detail level, as [otlp] rules: exe:verb#mode=level, exe:verb=level, exe=level");
  app->add_option("--nickname-key", options->nickname_key,
                  "otlp-json: the def_param whose value is the repository's nickname")
      ->capture_default_str();
  add_owner_option(*app, options->uid);
  app->add_option("--important-data", options->important_data,
                  "otlp-json: a data event (category/key) sent verbatim at any level");
  app->add_option("--ruleset-key", options->ruleset_key,
                  "otlp-json: the def_param whose value names a repository's ruleset or detail level");
  app->add_option("--nickname", options->nicknames, "otlp-json: a nickname's level or ruleset, as [otlp] nicknames");
  app->add_option("--ruleset", options->rulesets,
                  "otlp-json: a named ruleset, as [otlp] rulesets (\"rs:NAME PATTERN=LEVEL ... *=LEVEL\")");
  app->add_option("--summary-message", options->summary_messages, "otlp-json: FIELD=PREFIX, as [otlp] summary_messages");
  app->add_option("--summary-region", options->summary_regions,
                  "otlp-json: CAT/LABEL=COUNT,TIME, as [otlp] summary_regions");
  app->add_option("--important-event", options->important_events,
                  "otlp-json: FIELD=CAT/KEY_PREFIX, as [otlp] important_events");
  app->add_flag("--pii-user-name", options->pii_user_name, "otlp-json: send the sender's user name (trace2.pii.username)");
  app->add_flag("--pii-host-name", options->pii_host_name, "otlp-json: send this host's name (trace2.pii.hostname)");
  app->add_flag("--no-host-name", options->no_host_name,
                "otlp-json: leave host.name off the resource, as [otlp] resource_host_name = false");
  app->add_option("--outcome-detail", options->outcome_detail,
                  "otlp-json: failed and slow runs at least at this level (summary, process, verbose), as [otlp] "
                  "outcome_detail");
  app->add_option("--slow-ms", options->slow_ms, "otlp-json: with --outcome-detail, a run this long is slow")
      ->check(whole_number_at_least(0));
  app->add_flag("--slow-p99", options->slow_p99,
                "otlp-json: with --outcome-detail, a run slower than its command's p99 (last 7 days) is slow");
  return {app, [options](const Context& ctx) { run_export(ctx, *options); }, nullptr};
}

}  // namespace trace2d::ctl
