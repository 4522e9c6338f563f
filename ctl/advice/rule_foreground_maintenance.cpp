// foreground-maintenance: `git gc --auto` or `git maintenance run --auto`,
// which git starts at the end of commit, fetch, merge, ..., ran in the
// foreground of the command and made the user wait.

#include <string>

#include "ctl/advice/rules.hpp"

namespace trace2d::ctl::advice {
namespace {

// A run counts when its automatic maintenance took this long: below it is
// the check that found nothing to do, or a detached gc's quick start.
constexpr double k_min_run_seconds = 0.25;

}  // namespace

std::vector<Finding> foreground_maintenance_rule(const RuleScope& scope) {
  const std::vector<RunCost> costs = run_costs(
      scope,
      "SELECT c.sid, CASE WHEN json_extract(c.argv, '$[1]') = 'gc' THEN 'git gc --auto'"
      " ELSE 'git maintenance run --auto' END AS subject, c.elapsed AS seconds"
      " FROM children c JOIN w ON w.sid = c.sid"
      // A gc that gc or maintenance itself runs is the wait the user's
      // command started them for, already counted there.
      " WHERE w.cmd_name NOT IN ('gc', 'maintenance') AND json_extract(c.argv, '$[0]') = 'git'"
      " AND c.elapsed >= " + std::to_string(k_min_run_seconds) +
      " AND (json_extract(c.argv, '$[1]') = 'gc' OR (json_extract(c.argv, '$[1]') = 'maintenance'"
      " AND json_extract(c.argv, '$[2]') = 'run'))"
      " AND EXISTS (SELECT 1 FROM json_each(c.argv) a WHERE a.value = '--auto')");
  const auto runs = runs_per_command(scope);
  std::vector<Finding> findings;
  for (const CostGroup& group : group_costs(costs)) {
    // Automatic maintenance runs seldom: two slow ones are a pattern.
    if (group.runs.size() < 2) {
      continue;
    }
    Finding f = finding_from("foreground-maintenance", group, runs,
                             "`" + group.subject + "` in the foreground");
    f.finding = "`git " + group.command + "` made the user wait " + seconds_text(group.seconds()) + " in all for `" +
                group.subject + "`; scheduled background maintenance would do that work between commands";
    // `maintenance start` registers the repository for hourly background
    // maintenance and sets maintenance.auto=false in it.
    const std::string& worktree = group.runs.front().worktree;
    f.fix = worktree.empty() ? "git maintenance start" : "git -C " + shell_quote(worktree) + " maintenance start";
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace trace2d::ctl::advice
