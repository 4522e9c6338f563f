// status-refresh: `git status` in a large worktree spends most of its time
// checking every tracked file for changes (the index preload and refresh:
// one lstat per entry), which a file system monitor makes unnecessary.

#include <cstdint>
#include <string>

#include "ctl/advice/rules.hpp"
#include "ctl/advice/status_settings.hpp"

namespace trace2d::ctl::advice {
namespace {

constexpr double k_min_share = 0.40;            // of the status runs' time
constexpr double k_min_median_elapsed = 0.10;   // seconds: a status that is slow at all
constexpr std::int64_t k_min_index_entries = 10'000;  // where a monitor pays off

}  // namespace

std::vector<Finding> status_refresh_rule(const RuleScope& scope) {
  // git 2.39 times the threaded lstat of every entry as region
  // index/preload and what is left of it as index/refresh.
  const std::vector<RunCost> costs = run_costs(
      scope,
      "SELECT r.sid, w.worktree AS subject, r.elapsed AS seconds FROM regions r JOIN w ON w.sid = r.sid"
      " WHERE w.cmd_name = 'status' AND r.category = 'index' AND r.label IN ('preload', 'refresh')");
  const auto entries = data_value(scope, "status", "index", "read/cache_nr");
  const auto monitor = reported_setting(scope, "status", "core.fsmonitor");
  const auto runs = runs_per_command(scope);
  std::vector<Finding> findings;
  for (const CostGroup& group : group_costs(costs)) {
    std::vector<double> sizes;
    for (const RunCost& run : group.runs) {
      if (const auto it = entries.find(run.sid); it != entries.end()) {
        sizes.push_back(static_cast<double>(it->second));
      }
    }
    const double index_entries = median(sizes);
    const Setting setting = setting_in(group, monitor);
    if (!enough_runs(scope, group) || group.share() < k_min_share ||
        group.median_elapsed() < k_min_median_elapsed || index_entries < k_min_index_entries ||
        setting == Setting::on) {
      continue;
    }
    Finding f = finding_from("status-refresh", group, runs,
                             "checking the " + std::to_string(static_cast<std::int64_t>(index_entries)) +
                                 " index entries for changes (regions index/preload and index/refresh)");
    f.finding = "`git " + group.command + "` in " + group.subject + " spends " + percent_text(group.share()) +
                " of its time checking every tracked file for changes; a file system monitor would tell it"
                " which changed";
    f.fix = "git -C " + shell_quote(group.subject) + " config core.fsmonitor true";
    if (setting == Setting::unknown) {
      f.cannot_see =
          "No run reported core.fsmonitor: it is unset (off), or trace2.configParams does not name it. To let "
          "trace2d tell: " + std::string(k_status_config_params);
    } else {
      f.evidence += ". core.fsmonitor is reported off";
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace trace2d::ctl::advice
