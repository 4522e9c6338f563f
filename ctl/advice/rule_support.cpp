#include "ctl/advice/rule_support.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

#include "ctl/advice/command_key.hpp"

namespace trace2d::ctl::advice {
namespace {

// SIDs the evidence text names; the `sids` column has more.
constexpr std::size_t k_sids_in_text = 3;
constexpr std::size_t k_sids_kept = 20;

std::string text_column(const db::Statement& stmt, int column) {
  return std::string(stmt.column_text(column));
}

}  // namespace

std::string runs_cte(const Window& window) { return runs_sql(window_condition(window)); }

std::vector<RunCost> run_costs(const RuleScope& scope, const std::string& cost_sql) {
  db::Statement stmt = scope.db.prepare(
      "WITH " + runs_cte(scope.window) + ", cost AS (" + cost_sql +
      ") SELECT w.run_sid, w.command, c.subject, sum(c.seconds), w.elapsed, min(w.worktree) FROM cost c"
      " JOIN w ON w.sid = c.sid WHERE c.seconds IS NOT NULL AND c.subject IS NOT NULL GROUP BY w.run_sid, c.subject"
      " ORDER BY w.command, c.subject, sum(c.seconds) DESC, w.run_sid");
  bind_window(stmt, scope.window);
  std::vector<RunCost> costs;
  while (stmt.step()) {
    costs.push_back({text_column(stmt, 0), text_column(stmt, 1), text_column(stmt, 2), stmt.column_double(3),
                     stmt.column_double(4), text_column(stmt, 5)});
  }
  return costs;
}

double CostGroup::seconds() const {
  double sum = 0;
  for (const RunCost& run : runs) {
    sum += run.seconds;
  }
  return sum;
}

double CostGroup::elapsed() const {
  double sum = 0;
  for (const RunCost& run : runs) {
    sum += run.elapsed;
  }
  return sum;
}

double CostGroup::median_seconds() const {
  std::vector<double> values;
  for (const RunCost& run : runs) {
    values.push_back(run.seconds);
  }
  return median(std::move(values));
}

double CostGroup::median_elapsed() const {
  std::vector<double> values;
  for (const RunCost& run : runs) {
    values.push_back(run.elapsed);
  }
  return median(std::move(values));
}

double CostGroup::share() const {
  const double total = elapsed();
  return total > 0 ? seconds() / total : 0;
}

std::vector<CostGroup> group_costs(const std::vector<RunCost>& costs) {
  std::vector<CostGroup> groups;
  for (const RunCost& cost : costs) {
    if (groups.empty() || groups.back().command != cost.command || groups.back().subject != cost.subject) {
      groups.push_back({cost.command, cost.subject, {}});
    }
    groups.back().runs.push_back(cost);
  }
  return groups;
}

std::map<std::string, std::int64_t> runs_per_command(const RuleScope& scope) {
  db::Statement stmt = scope.db.prepare("WITH " + runs_cte(scope.window) + " SELECT command, count(*) FROM " +
                                        std::string(k_runs_table) + " GROUP BY command");
  bind_window(stmt, scope.window);
  std::map<std::string, std::int64_t> runs;
  while (stmt.step()) {
    runs[text_column(stmt, 0)] = stmt.column_int(1);
  }
  return runs;
}

std::map<std::string, std::string> reported_setting(const RuleScope& scope, std::string_view cmd_name,
                                                    std::string_view param) {
  db::Statement stmt = scope.db.prepare("WITH " + runs_cte(scope.window) +
                                        " SELECT w.run_sid, p.value FROM w JOIN params p ON p.sid = w.sid"
                                        " WHERE w.cmd_name = ?5 AND lower(p.param) = ?4"
                                        " ORDER BY w.run_sid, p.sid, p.seq");
  bind_window(stmt, scope.window);
  stmt.bind_text(5, cmd_name);
  std::string lowered(param);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  stmt.bind_text(4, lowered);
  std::map<std::string, std::string> values;
  while (stmt.step()) {
    values[text_column(stmt, 0)] = text_column(stmt, 1);  // the last one wins, as in git
  }
  return values;
}

std::map<std::string, std::int64_t> data_value(const RuleScope& scope, std::string_view cmd_name,
                                              std::string_view category, std::string_view key) {
  db::Statement stmt = scope.db.prepare("WITH " + runs_cte(scope.window) +
                                        " SELECT w.run_sid, max(CAST(d.value AS INTEGER)) FROM w"
                                        " JOIN data d ON d.sid = w.sid WHERE w.cmd_name = ?6 AND d.category = ?4"
                                        " AND d.key = ?5 GROUP BY w.run_sid");
  bind_window(stmt, scope.window);
  stmt.bind_text(4, category);
  stmt.bind_text(5, key);
  stmt.bind_text(6, cmd_name);
  std::map<std::string, std::int64_t> values;
  while (stmt.step()) {
    values[text_column(stmt, 0)] = stmt.column_int(1);
  }
  return values;
}

bool enough_runs(const RuleScope& scope, const CostGroup& group) {
  return static_cast<std::int64_t>(group.runs.size()) >= scope.limits.min_runs;
}

Finding finding_from(std::string rule, const CostGroup& group, const std::map<std::string, std::int64_t>& runs,
                     std::string_view what) {
  const auto found = runs.find(group.command);
  const std::int64_t command_runs = found == runs.end() ? 0 : found->second;
  Finding f;
  f.rule = std::move(rule);
  f.command = group.command;
  f.subject = group.subject;
  f.runs = static_cast<std::int64_t>(group.runs.size());
  f.command_runs = std::max(command_runs, f.runs);
  f.seconds = group.seconds();
  f.command_seconds = group.elapsed();
  f.median_seconds = group.median_seconds();
  for (const RunCost& run : group.runs) {
    if (f.sids.size() == k_sids_kept) {
      break;
    }
    f.sids.push_back(run.sid);
  }
  std::string named;
  for (std::size_t i = 0; i < f.sids.size() && i < k_sids_in_text; ++i) {
    named += (i == 0 ? "" : ", ") + f.sids[i];
  }
  f.evidence = std::to_string(f.runs) + " of " + std::to_string(f.command_runs) + " runs of `" + f.command +
               "`: " + std::string(what) + " took " + seconds_text(f.seconds) + " in all, median " +
               seconds_text(f.median_seconds) + " a run, " + percent_text(f.share()) + " of those runs' " +
               seconds_text(f.command_seconds) + " (median run " + seconds_text(group.median_elapsed()) +
               "). Most affected: " + named;
  return f;
}

bool is_false(std::string_view value) {
  std::string lowered(value);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lowered.empty() || lowered == "false" || lowered == "no" || lowered == "off" || lowered == "0";
}

double median(std::vector<double> values) {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, seconds < 10 ? "%.2f s" : "%.1f s", seconds);
  return text;
}

std::string percent_text(double share) {
  return std::to_string(static_cast<long long>(std::lround(share * 100))) + "%";
}

std::string shell_quote(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace trace2d::ctl::advice
