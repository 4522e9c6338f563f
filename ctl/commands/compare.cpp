// trace2ctl compare: two populations of runs (two time windows, two git
// versions, two repositories), per command and, within the commands that
// changed, per region and child process: counts, p50/p90 of each side, the
// shift, and whether it is real (ctl/analysis/, docs/trace2ctl.md).

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ctl/analysis/population_comparison.hpp"
#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/commands/window_flags.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/display.hpp"
#include "ctl/output/print_result.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/time_filter.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

constexpr std::size_t k_table_name_chars = 50;

struct CompareOptions {
  std::string since;
  std::string until;
  std::string split;
  std::string baseline_since;
  std::string baseline_until;
  std::string target_since;
  std::string target_until;
  std::optional<std::string> baseline_version;
  std::optional<std::string> target_version;
  std::optional<std::string> baseline_repo;
  std::optional<std::string> target_repo;
  std::vector<std::string> commands;
  bool all = false;  // every git process, not only what the user ran
  std::string regions;  // empty: changed, or all with --cmd
  long long min_runs = 8;
  double alpha = 0.01;
  double min_change_pct = 10;
  double min_change_ms = 5;
};

std::optional<std::int64_t> parse_flag(const std::string& text, std::int64_t now) {
  if (text.empty()) {
    return std::nullopt;
  }
  const auto us = parse_time(text, now);
  if (!us) {
    throw CommandError(describe_time_error(text));
  }
  return us;
}

// The two populations the flags describe (docs/trace2ctl.md, "compare").
CompareRequest to_request(const CompareOptions& options) {
  const std::int64_t now = proto::unix_now_us();
  const std::int64_t until = parse_flag(options.until, now).value_or(now);
  const std::int64_t since = parse_flag(options.since, now).value_or(until - k_default_target_us - k_default_baseline_us);
  const bool other_dimension = options.baseline_version || options.target_version || options.baseline_repo ||
                               options.target_repo;
  const bool split_in_time = !options.split.empty() || !other_dimension;
  const std::int64_t split = parse_flag(options.split, now).value_or(until - k_default_target_us);
  struct Bounds {
    std::int64_t since;
    std::int64_t until;
  };
  const Bounds baseline{parse_flag(options.baseline_since, now).value_or(since),
                        parse_flag(options.baseline_until, now).value_or(split_in_time ? split : until)};
  const Bounds target{parse_flag(options.target_since, now).value_or(split_in_time ? split : since),
                      parse_flag(options.target_until, now).value_or(until)};
  for (const auto& [name, bounds] : {std::pair{"baseline", baseline}, std::pair{"target", target}}) {
    if (bounds.since >= bounds.until) {
      throw CommandError(std::string("the ") + name + " window is empty: it would start at " +
                         time_as_text(bounds.since) + " and end at " + time_as_text(bounds.until) +
                         " (see --since, --until, --split and --" + name + "-since/--" + name + "-until)");
    }
  }
  CompareRequest request;
  request.baseline.window.top_level = !options.all;
  request.target.window.top_level = !options.all;
  request.baseline.window.since = time_as_text(baseline.since);
  request.baseline.window.until = time_as_text(baseline.until);
  request.baseline.version = options.baseline_version;
  request.baseline.repo = options.baseline_repo;
  request.baseline.repo_path = repo_path_of(options.baseline_repo.value_or(""));
  request.target.window.since = time_as_text(target.since);
  request.target.window.until = time_as_text(target.until);
  request.target.version = options.target_version;
  request.target.repo = options.target_repo;
  request.target.repo_path = repo_path_of(options.target_repo.value_or(""));
  request.commands = options.commands;
  const std::string regions = options.regions.empty() ? (options.commands.empty() ? "changed" : "all") : options.regions;
  request.detail = regions == "all" ? DetailScope::all : regions == "none" ? DetailScope::none : DetailScope::changed;
  request.thresholds.min_runs = static_cast<std::size_t>(options.min_runs);
  request.thresholds.alpha = options.alpha;
  request.thresholds.min_change_ratio = options.min_change_pct / 100;
  request.thresholds.min_change_seconds = options.min_change_ms / 1000;
  return request;
}

Value number_or_null(const std::optional<double>& value) {
  return value ? Value(*value) : Value(Null{});
}

// `value` to `decimals` places, never "-0.0".
double rounded(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  const double result = std::round(value * scale) / scale;
  return result == 0 ? 0.0 : result;
}

// Milliseconds rounded for reading.
Value milliseconds(const std::optional<double>& seconds, int decimals = 1) {
  if (!seconds) {
    return Null{};
  }
  return rounded(*seconds * 1000, decimals);
}

std::optional<double> change_ratio(const SampleComparison& c) {
  if (!c.shift || !c.baseline.p50 || *c.baseline.p50 <= 0) {
    return std::nullopt;
  }
  return c.shift->shift / *c.baseline.p50;
}

std::string significant_digits(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", value);
  return text;
}

ResultSet machine_rows(const CompareResult& result) {
  ResultSet set;
  set.columns = {"kind",        "command",     "name",       "baseline_runs", "target_runs", "baseline_p50",
                 "target_p50",  "baseline_p90", "target_p90", "change",        "change_low",  "change_high",
                 "change_ratio", "u",          "p_value",    "p_adjusted",    "exact",       "verdict"};
  for (const CompareRow& row : result.rows) {
    const SampleComparison& c = row.comparison;
    const auto shift_part = [&c](double ShiftEstimate::*member) -> Value {
      return c.shift ? Value((*c.shift).*member) : Value(Null{});
    };
    set.rows.push_back({std::string(row_kind_name(row.kind)), row.command,
                        row.name.empty() ? Value(Null{}) : Value(row.name),
                        static_cast<std::int64_t>(c.baseline.count), static_cast<std::int64_t>(c.target.count),
                        number_or_null(c.baseline.p50), number_or_null(c.target.p50),
                        number_or_null(c.baseline.p90), number_or_null(c.target.p90),
                        shift_part(&ShiftEstimate::shift), shift_part(&ShiftEstimate::low),
                        shift_part(&ShiftEstimate::high), number_or_null(change_ratio(c)),
                        c.test ? Value(c.test->u) : Value(Null{}), c.test ? Value(c.test->p_value) : Value(Null{}),
                        c.test ? Value(c.p_adjusted) : Value(Null{}),
                        c.test ? Value(std::int64_t{c.test->exact ? 1 : 0}) : Value(Null{}),
                        std::string(verdict_name(c.verdict))});
  }
  return set;
}

ResultSet table_rows(const CompareResult& result) {
  ResultSet set;
  set.columns = {"command",       "part",          "base_runs",     "target_runs", "base_p50_ms",
                 "target_p50_ms", "base_p90_ms",   "target_p90_ms", "change_ms",   "interval_ms",
                 "change_pct",    "p",             "verdict"};
  for (const CompareRow& row : result.rows) {
    const SampleComparison& c = row.comparison;
    const std::optional<double> ratio = change_ratio(c);
    std::string interval;
    if (c.shift) {
      interval = cell_text(milliseconds(c.shift->low)) + ".." + cell_text(milliseconds(c.shift->high));
    }
    set.rows.push_back(
        {row.command,
         row.kind == RowKind::command ? Value(Null{}) : Value(std::string(row_kind_name(row.kind)) + " " + row.name),
         static_cast<std::int64_t>(c.baseline.count), static_cast<std::int64_t>(c.target.count),
         milliseconds(c.baseline.p50), milliseconds(c.target.p50), milliseconds(c.baseline.p90),
         milliseconds(c.target.p90), c.shift ? milliseconds(c.shift->shift) : Value(Null{}),
         interval.empty() ? Value(Null{}) : Value(interval),
         ratio ? Value(rounded(*ratio * 100, 1)) : Value(Null{}),
         c.test ? Value(significant_digits(c.p_adjusted)) : Value(Null{}), std::string(verdict_name(c.verdict))});
  }
  return set;
}

std::string describe_population(const Population& population, std::size_t runs) {
  std::string text = display_time(*population.window.since) + " .. " + display_time(*population.window.until);
  if (population.version) {
    text += ", git " + *population.version;
  }
  if (population.repo) {
    text += ", repository " + *population.repo;
  }
  return text + ": " + std::to_string(runs) + " runs";
}

void append_population_json(std::string& out, const Population& population, std::size_t runs) {
  out += "{\"since\":";
  append_json_string(out, *population.window.since);
  out += ",\"until\":";
  append_json_string(out, *population.window.until);
  out += ",\"version\":";
  append_json_value(out, population.version ? Value(*population.version) : Value(Null{}));
  out += ",\"repo\":";
  append_json_value(out, population.repo ? Value(*population.repo) : Value(Null{}));
  out += ",\"runs\":" + std::to_string(runs) + "}";
}

void print_json(std::ostream& out, const CompareRequest& request, const CompareResult& result) {
  std::string text = "{\"baseline\":";
  append_population_json(text, request.baseline, result.baseline_runs);
  text += ",\"target\":";
  append_population_json(text, request.target, result.target_runs);
  const CompareThresholds& t = request.thresholds;
  text += ",\"method\":{\"test\":\"mann-whitney-u, two-sided\",\"correction\":\"benjamini-hochberg\",\"alpha\":";
  append_json_value(text, t.alpha);
  text += ",\"min_runs\":" + std::to_string(t.min_runs) + ",\"min_change\":";
  append_json_value(text, t.min_change_seconds);
  text += ",\"min_change_ratio\":";
  append_json_value(text, t.min_change_ratio);
  text += "},\"rows\":";
  append_json_array(text, machine_rows(result));
  text += "}\n";
  out << text;
}

void run_compare(const Context& ctx, const CompareOptions& options) {
  const CompareRequest request = to_request(options);
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const CompareResult result = compare_populations(db, request);
  if (ctx.global.format == OutputFormat::json) {
    print_json(ctx.out, request, result);
    return;
  }
  if (is_machine_format(ctx.global.format)) {
    print_result(ctx.out, machine_rows(result), ctx.global.format);
    return;
  }
  const CompareThresholds& t = request.thresholds;
  ctx.out << "baseline: " << describe_population(request.baseline, result.baseline_runs) << "\n"
          << "target:   " << describe_population(request.target, result.target_runs) << "\n"
          << "slower or faster: a two-sided Mann-Whitney U test at " << significant_digits(t.alpha)
          << " (Benjamini-Hochberg adjusted p), a change of at least " << significant_digits(t.min_change_seconds * 1000)
          << " ms and " << significant_digits(t.min_change_ratio * 100) << "% of the baseline p50, at least "
          << t.min_runs << " runs a side; change: the median of the differences (Hodges-Lehmann)\n\n";
  if (result.rows.empty()) {
    ctx.out << "no successful runs in either population\n";
    return;
  }
  const ResultSet table = table_rows(result);
  TableStyle style({{"part", k_table_name_chars}});
  style.colour = ctx.global.colour;
  const std::size_t verdict_column = table.columns.size() - 1;
  style.alert = [verdict_column](const Row& row) {
    const auto* verdict = std::get_if<std::string>(&row[verdict_column]);
    return verdict != nullptr && *verdict == verdict_name(Verdict::slower);
  };
  print_table(ctx.out, table, style);
}

}  // namespace

Command add_compare_command(CLI::App& cli) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* app = cli.add_subcommand(
      "compare",
      "Two populations of runs (time windows, git versions, repositories) per command and region: what got "
      "slower, by how much, and whether it is more than noise");
  const auto time_option = [app](const std::string& name, std::string& value, const std::string& help) {
    app->add_option(name, value, help)->check(CLI::Validator(describe_time_error, "TIME", "time"));
  };
  time_option("--since", options->since,
              std::string("Start of both populations (default: 35 days before --until): ") + k_time_help);
  time_option("--until", options->until, "End of both populations, exclusive (default: now)");
  time_option("--split", options->split,
              "Where the baseline ends and the target begins (default: 7 days before --until); by default the "
              "populations are split in time unless a --*-version or --*-repo tells them apart");
  time_option("--baseline-since", options->baseline_since, "Start of the baseline (default: --since)");
  time_option("--baseline-until", options->baseline_until, "End of the baseline (default: --split)");
  time_option("--target-since", options->target_since, "Start of the target (default: --split)");
  time_option("--target-until", options->target_until, "End of the target (default: --until)");
  app->add_option("--baseline-version", options->baseline_version, "Only runs of this git version (exe) in the baseline");
  app->add_option("--target-version", options->target_version, "Only runs of this git version (exe) in the target");
  app->add_option("--baseline-repo", options->baseline_repo,
                  "Only runs in this repository in the baseline: its nickname, its worktree's path, or the path's "
                  "last components as the repository column shows them");
  app->add_option("--target-repo", options->target_repo, "Only runs in this repository in the target (as --baseline-repo)");
  add_cmd_option(*app, options->commands);
  add_all_flag(*app, options->all);
  app->add_option("--regions", options->regions,
                  "Whose regions and child processes to compare: changed (commands found slower or faster; the "
                  "default), all (the default with --cmd), none")
      ->check(CLI::IsMember({"changed", "all", "none"}));
  app->add_option("--min-runs", options->min_runs, "Runs each side needs before a row is tested")
      ->check(whole_number_at_least(2))
      ->capture_default_str();
  app->add_option("--alpha", options->alpha,
                  "Significance level, after the Benjamini-Hochberg adjustment across the rows")
      ->check(number_between(1e-12, 0.5, "probability"))
      ->capture_default_str();
  app->add_option("--min-change-pct", options->min_change_pct,
                  "Smallest change reported, in percent of the baseline's p50")
      ->check(non_negative_number())
      ->capture_default_str();
  app->add_option("--min-change-ms", options->min_change_ms, "Smallest change reported, in milliseconds")
      ->check(non_negative_number())
      ->capture_default_str();
  return {app, [options](const Context& ctx) { run_compare(ctx, *options); }, [] { return true; }};
}

}  // namespace trace2d::ctl
