#pragma once
// What the rules share: the runs of the window and what each cost in the
// rule's subject, grouped per command and subject; settings and data values
// the runs reported; and the wording of evidence.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ctl/advice/finding.hpp"
#include "ctl/query/analysis_queries.hpp"
#include "db/sqlite.hpp"

namespace trace2d::ctl::advice {

struct RuleScope {
  db::Database& db;
  const Window& window;
  Limits limits;
};

// The CTEs every rule's SQL can read, after "WITH ": `w (sid, run_sid,
// command, cmd_name, elapsed, worktree)`, every process of the finished
// runs of the window, and the runs themselves (command_key.hpp). A rule
// looks for costs in the processes (`w.sid`, `w.cmd_name`: `status` is git's
// status wherever it ran) and reports them per run (`w.command`, the
// name the user knows).
[[nodiscard]] std::string runs_cte(const Window& window);

// One run and the time it spent in a rule's subject.
struct RunCost {
  std::string sid;  // the run's: the top-level session
  std::string command;
  std::string subject;
  double seconds = 0;  // in the subject, in all of the run's processes
  double elapsed = 0;  // the whole run
  std::string worktree;  // of the processes that spent it
};

// Runs `cost_sql`, a SELECT over `w` (runs_cte) yielding (sid, subject,
// seconds) with the SID of a process, one row or more per process; rows
// of one run and subject add up.
[[nodiscard]] std::vector<RunCost> run_costs(const RuleScope& scope, const std::string& cost_sql);

// The runs of one command that spent time in one subject.
struct CostGroup {
  std::string command;
  std::string subject;
  std::vector<RunCost> runs;  // most time in the subject first

  [[nodiscard]] double seconds() const;
  [[nodiscard]] double elapsed() const;
  [[nodiscard]] double median_seconds() const;
  [[nodiscard]] double median_elapsed() const;
  [[nodiscard]] double share() const;
};

[[nodiscard]] std::vector<CostGroup> group_costs(const std::vector<RunCost>& costs);

// Finished runs per command in the window.
[[nodiscard]] std::map<std::string, std::int64_t> runs_per_command(const RuleScope& scope);

// Per run (its SID) in the window with processes of git's `cmd_name`: the
// last value they reported for setting `param` (a def_param, lower-cased
// as git reports it), when they reported one. (Per cmd_name: the lookup
// reads those processes' events.)
[[nodiscard]] std::map<std::string, std::string> reported_setting(const RuleScope& scope, std::string_view cmd_name,
                                                                  std::string_view param);

// Per run with processes of git's `cmd_name`: the largest integer value of
// their data events (`category`, `key`).
[[nodiscard]] std::map<std::string, std::int64_t> data_value(const RuleScope& scope, std::string_view cmd_name,
                                                            std::string_view category, std::string_view key);

// A Finding with the numbers of `group` filled in and its evidence written:
// "<n> of <m> runs of <command>: <what> took ...".
// `command_runs`: runs_per_command() of the window.
[[nodiscard]] Finding finding_from(std::string rule, const CostGroup& group,
                                   const std::map<std::string, std::int64_t>& command_runs, std::string_view what);

// Whether `group` has the runs a finding needs (limits.min_runs).
[[nodiscard]] bool enough_runs(const RuleScope& scope, const CostGroup& group);

// Git's boolean spellings of "off" (and the empty value).
[[nodiscard]] bool is_false(std::string_view value);

// The median of `values` (the lower middle one for an even count); 0 for none.
[[nodiscard]] double median(std::vector<double> values);

// Seconds for reading: "0.35 s", "12.4 s".
[[nodiscard]] std::string seconds_text(double seconds);
[[nodiscard]] std::string percent_text(double share);

// `text` as one word for a POSIX shell.
[[nodiscard]] std::string shell_quote(std::string_view text);

}  // namespace trace2d::ctl::advice
