// ssh-variant-probe: git runs the ssh program an extra time, as `<ssh> -G`,
// before each connection when the program's name does not tell which SSH it
// is (a wrapper script, GIT_SSH_COMMAND with an unknown name); when that
// program is slow, every fetch and push pays it twice.

#include <string>

#include "ctl/advice/rules.hpp"

namespace trace2d::ctl::advice {
namespace {

constexpr double k_min_median_seconds = 0.10;  // seconds the probe takes a run

}  // namespace

std::vector<Finding> ssh_variant_probe_rule(const RuleScope& scope) {
  // connect.c runs the probe with no child class: "<ssh> -G [-o ...] host",
  // right before the transport/ssh child it is probing for.
  const std::vector<RunCost> costs = run_costs(
      scope,
      "SELECT c.sid, json_extract(c.argv, '$[0]') AS subject, c.elapsed AS seconds"
      " FROM children c JOIN w ON w.sid = c.sid WHERE json_extract(c.argv, '$[1]') = '-G'"
      " AND coalesce(c.child_class, '?') = '?'"
      " AND EXISTS (SELECT 1 FROM children t WHERE t.sid = c.sid AND t.child_class = 'transport/ssh'"
      " AND t.child_id = c.child_id + 1)");
  const auto runs = runs_per_command(scope);
  std::vector<Finding> findings;
  for (const CostGroup& group : group_costs(costs)) {
    if (!enough_runs(scope, group) ||
        group.median_seconds() < k_min_median_seconds) {
      continue;
    }
    Finding f = finding_from("ssh-variant-probe", group, runs,
                             "probing which SSH `" + group.subject + "` is (`" + group.subject + " -G`)");
    f.subject = "ssh probe " + group.subject;
    f.finding = "`git " + group.command + "` runs `" + group.subject + " -G` before every connection to learn which "
                "SSH it is, " + seconds_text(group.median_seconds()) + " a run; telling git spares it";
    f.fix = "git config --global ssh.variant ssh";
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace trace2d::ctl::advice
