// slow-hook: a hook (a child of class `hook`) takes a large part of the
// time of the command that runs it.

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ctl/advice/rules.hpp"

namespace trace2d::ctl::advice {
namespace {

constexpr double k_min_share = 0.20;           // of the runs' time
constexpr double k_min_median_seconds = 0.20;  // seconds in the hook a run

// The one command that runs `command` without the hook, for the hooks git
// lets a flag skip; else with no hooks at all.
std::string skip_hook(const std::string& command, const std::string& hook) {
  if (hook == "pre-commit" || hook == "commit-msg") {
    return "git commit --no-verify";
  }
  if (hook == "pre-push") {
    return "git push --no-verify";
  }
  if (hook == "pre-merge-commit") {
    return "git merge --no-verify";
  }
  return "git -c core.hooksPath=/dev/null " + command;
}

// Where the runs ran: a hook is a repository's (or a core.hooksPath shared
// by many), so the runs are pooled per hook and the finding names the
// repositories, most runs first: "/a (3 runs), /b (1 run) and 2 more".
std::string repositories_of(const CostGroup& group) {
  std::map<std::string, int> counts;
  for (const RunCost& run : group.runs) {
    if (!run.worktree.empty()) {
      ++counts[run.worktree];
    }
  }
  std::vector<std::pair<std::string, int>> by_runs(counts.begin(), counts.end());
  std::stable_sort(by_runs.begin(), by_runs.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  constexpr std::size_t k_named = 3;
  std::string text;
  for (std::size_t i = 0; i < by_runs.size() && i < k_named; ++i) {
    text += (i == 0 ? "" : ", ") + by_runs[i].first + " (" + std::to_string(by_runs[i].second) +
            (by_runs[i].second == 1 ? " run)" : " runs)");
  }
  if (by_runs.size() > k_named) {
    text += " and " + std::to_string(by_runs.size() - k_named) + " more";
  }
  return text;
}

}  // namespace

std::vector<Finding> slow_hook_rule(const RuleScope& scope) {
  const std::vector<RunCost> costs = run_costs(
      scope,
      "SELECT c.sid, c.hook_name AS subject, c.elapsed AS seconds FROM children c JOIN w ON w.sid = c.sid"
      " WHERE c.child_class = 'hook'");
  const auto runs = runs_per_command(scope);
  std::vector<Finding> findings;
  for (const CostGroup& group : group_costs(costs)) {
    if (!enough_runs(scope, group) || group.share() < k_min_share ||
        group.median_seconds() < k_min_median_seconds) {
      continue;
    }
    Finding f = finding_from("slow-hook", group, runs,
                             "the " + group.subject + " hook (children of class hook)");
    f.subject = "hook " + group.subject;
    const std::string repositories = repositories_of(group);
    f.finding = "`git " + group.command + "` waits " + seconds_text(group.median_seconds()) + " a run on its " +
                group.subject + " hook" + (repositories.empty() ? "" : " in " + repositories) + ", " +
                percent_text(group.share()) + " of its time: make the hook faster, or skip it when it is not needed";
    f.fix = skip_hook(group.command, group.subject);
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace trace2d::ctl::advice
