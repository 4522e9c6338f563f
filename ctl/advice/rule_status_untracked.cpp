// status-untracked: `git status` spends most of its time looking for
// untracked files (reading every directory of the worktree), which the
// untracked cache limits to the directories that changed.

#include <string>

#include "ctl/advice/rules.hpp"
#include "ctl/advice/status_settings.hpp"

namespace trace2d::ctl::advice {
namespace {

constexpr double k_min_share = 0.30;           // of the status runs' time
constexpr double k_min_median_elapsed = 0.10;  // seconds

}  // namespace

std::vector<Finding> status_untracked_rule(const RuleScope& scope) {
  // The scan is region dir/read_directory (inside status/untracked); only
  // the outermost one counts, as nested ones are within it.
  const std::vector<RunCost> costs = run_costs(
      scope,
      "SELECT r.sid, w.worktree AS subject, r.elapsed AS seconds FROM regions r JOIN w ON w.sid = r.sid"
      " WHERE w.cmd_name = 'status' AND r.category = 'dir' AND r.label = 'read_directory'"
      " AND NOT EXISTS (SELECT 1 FROM regions o WHERE o.sid = r.sid AND o.id = r.parent_region"
      " AND o.category = 'dir' AND o.label = 'read_directory')");
  const auto cache = reported_setting(scope, "status", "core.untrackedCache");
  const auto runs = runs_per_command(scope);
  std::vector<Finding> findings;
  for (const CostGroup& group : group_costs(costs)) {
    const Setting setting = setting_in(group, cache);
    if (!enough_runs(scope, group) || group.share() < k_min_share ||
        group.median_elapsed() < k_min_median_elapsed || setting == Setting::on) {
      continue;
    }
    Finding f = finding_from("status-untracked", group, runs,
                             "looking for untracked files (region dir/read_directory)");
    f.finding = "`git " + group.command + "` in " + group.subject + " spends " + percent_text(group.share()) +
                " of its time reading every directory for untracked files; the untracked cache would read only"
                " the directories that changed";
    f.fix = "git -C " + shell_quote(group.subject) + " config core.untrackedCache true";
    if (setting == Setting::unknown) {
      f.cannot_see =
          "No run reported core.untrackedCache: it is unset (off), or trace2.configParams does not name it. To "
          "let trace2d tell: " + std::string(k_status_config_params);
    } else {
      f.evidence += ". core.untrackedCache is reported off";
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace trace2d::ctl::advice
