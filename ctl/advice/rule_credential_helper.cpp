// credential-helper: the credential helper git asks for a password is slow
// (a vault, a network round trip), and asked again on every command.

#include <string>

#include "ctl/advice/rules.hpp"

namespace trace2d::ctl::advice {
namespace {

constexpr double k_min_share = 0.10;           // of the runs' time
constexpr double k_min_median_seconds = 0.20;  // seconds in the helper a run
constexpr std::string_view k_git_helper_prefix = "git credential-";

// The helper as `credential.helper` names it: git runs "git credential-X"
// for a helper X, and any other helper's text as it is, through the shell.
std::string configured_name(const std::string& command_line) {
  if (command_line.starts_with(k_git_helper_prefix)) {
    return command_line.substr(k_git_helper_prefix.size());
  }
  if (!command_line.empty() && command_line.front() == '/') {
    return command_line;
  }
  return "!" + command_line;
}

}  // namespace

std::vector<Finding> credential_helper_rule(const RuleScope& scope) {
  // git 2.39 gives a helper no child class: it is the shell command line
  // of the helper with the operation, `get`, appended (credential.c).
  const std::vector<RunCost> costs = run_costs(
      scope,
      "SELECT c.sid, substr(json_extract(c.argv, '$[0]'), 1, length(json_extract(c.argv, '$[0]')) - 4)"
      " AS subject, c.elapsed AS seconds FROM children c JOIN w ON w.sid = c.sid"
      " WHERE c.use_shell AND json_array_length(c.argv) = 1 AND json_extract(c.argv, '$[0]') LIKE '% get'"
      " AND coalesce(c.child_class, '?') NOT IN ('hook', 'shell_alias', 'dashed')");
  const auto runs = runs_per_command(scope);
  std::vector<Finding> findings;
  for (const CostGroup& group : group_costs(costs)) {
    if (!enough_runs(scope, group) || group.share() < k_min_share ||
        group.median_seconds() < k_min_median_seconds) {
      continue;
    }
    Finding f = finding_from("credential-helper", group, runs,
                             "asking the credential helper `" + group.subject + "`");
    f.subject = "credential helper " + group.subject;
    f.finding = "`git " + group.command + "` waits " + seconds_text(group.median_seconds()) +
                " a run for its credential helper; credential-cache, asked first, would answer from memory";
    // git asks helpers in order and stops at the first that answers: the
    // cache goes first, the slow helper after it (still asked on a miss,
    // and told to store what the user typed).
    f.fix = "git config --global --replace-all credential.helper 'cache --timeout=3600' && "
            "git config --global --add credential.helper " + shell_quote(configured_name(group.subject));
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace trace2d::ctl::advice
