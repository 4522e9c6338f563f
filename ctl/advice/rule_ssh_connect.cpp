// ssh-connect: every fetch or push over SSH opens a new connection, and
// opening it (TCP, key exchange, authentication) takes long. SSH's
// connection sharing opens it once and reuses it.

#include <string>

#include "ctl/advice/rules.hpp"

namespace trace2d::ctl::advice {
namespace {

constexpr double k_min_median_seconds = 0.25;  // from starting ssh to the server's first answer
constexpr double k_min_share = 0.20;           // of the runs' time

constexpr std::string_view k_shared_ssh =
    "git config --global core.sshCommand 'ssh -o ControlMaster=auto -o ControlPath=~/.ssh/git-%C"
    " -o ControlPersist=10m'";

}  // namespace

std::vector<Finding> ssh_connect_rule(const RuleScope& scope) {
  // The time from git starting ssh (child class transport/ssh) to the
  // first thing it learnt from the server: which protocol version it
  // speaks (data transfer/negotiated-version, sent once the server's first
  // lines arrived). The subject is the host: ssh's argument before the
  // remote command.
  const std::vector<RunCost> costs = run_costs(
      scope,
      "SELECT c.sid, json_extract(c.argv, '$[#-2]') AS subject,"
      " (SELECT min(d.t_abs) FROM data d WHERE d.sid = c.sid AND d.category = 'transfer'"
      "  AND d.key = 'negotiated-version' AND d.t_abs >= c.t_start) - c.t_start AS seconds"
      " FROM children c JOIN w ON w.sid = c.sid WHERE c.child_class = 'transport/ssh'"
      " AND json_array_length(c.argv) >= 3");
  const auto runs = runs_per_command(scope);
  std::vector<Finding> findings;
  for (const CostGroup& group : group_costs(costs)) {
    if (!enough_runs(scope, group) || group.share() < k_min_share ||
        group.median_seconds() < k_min_median_seconds) {
      continue;
    }
    Finding f = finding_from("ssh-connect", group, runs,
                             "connecting over SSH to " + group.subject +
                                 " (from starting ssh, child class transport/ssh, to the server's first answer)");
    f.subject = "ssh " + group.subject;
    f.finding = "`git " + group.command + "` waits " + seconds_text(group.median_seconds()) +
                " a run for its SSH connection to " + group.subject +
                "; SSH connection sharing would open it once and reuse it";
    f.fix = std::string(k_shared_ssh);
    f.cannot_see =
        "Whether core.sshCommand or GIT_SSH_COMMAND already chooses the ssh program: the fix replaces the program "
        "git runs (" + group.subject + "'s ssh command is in the children view's argv). To let trace2d see the "
        "setting: git config --global trace2.configParams 'core.sshCommand'";
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace trace2d::ctl::advice
