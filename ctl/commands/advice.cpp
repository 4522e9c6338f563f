// trace2ctl advice: findings drawn from the recorded runs, each with its
// evidence and the command that fixes it (ctl/advice/, docs/trace2ctl.md).

#include <algorithm>
#include <memory>
#include <string>

#include "ctl/advice/advice.hpp"
#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/commands/window_flags.hpp"
#include "ctl/output/print_result.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/database.hpp"

namespace trace2d::ctl {
namespace {

constexpr const char* k_default_since = "-7d";

struct AdviceOptions {
  WindowFlags window;
  int min_runs = 3;
};

// A finding for reading: what, the evidence, the fix, what it cannot see.
void print_findings(std::ostream& out, const ResultSet& result) {
  if (result.rows.empty()) {
    out << "No advice: no rule found enough evidence in this window.\n";
    return;
  }
  const std::vector<std::string> shown = {"finding", "evidence", "fix", "cannot_see", "sids"};
  bool first = true;
  for (const Row& row : result.rows) {
    if (!first) {
      out << '\n';
    }
    first = false;
    std::vector<std::string> columns;
    Row values;
    for (std::size_t i = 0; i < result.columns.size(); ++i) {
      const std::string& column = result.columns[i];
      const bool wanted = column == "rule" || std::find(shown.begin(), shown.end(), column) != shown.end();
      if (wanted && !std::holds_alternative<Null>(row[i])) {
        columns.push_back(column);
        values.push_back(row[i]);
      }
    }
    print_record(out, columns, values);
  }
}

void run_advice(const Context& ctx, const AdviceOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  WindowFlags flags = options.window;
  if (flags.since.empty()) {
    flags.since = k_default_since;
  }
  const Window window = to_window(flags);
  const ResultSet result = advice::findings_result(advice::find_advice(db, window, {options.min_runs}));
  if (ctx.global.format == OutputFormat::table) {
    print_findings(ctx.out, result);
  } else {
    print_result(ctx.out, result, ctx.global.format);
  }
}

}  // namespace

Command add_advice_command(CLI::App& cli) {
  auto options = std::make_shared<AdviceOptions>();
  CLI::App* app = cli.add_subcommand(
      "advice", "What slows git down here, from the recorded runs: each finding with its evidence and its fix");
  add_window_flags(*app, options->window);
  app->add_option("--min-runs", options->min_runs,
                  "Runs of a command that must show a cost before a rule reports it")
      ->check(whole_number_at_least(1))
      ->capture_default_str();
  return {app, [options](const Context& ctx) { run_advice(ctx, *options); }, [] { return true; }};
}

}  // namespace trace2d::ctl
