#pragma once
// One piece of advice: what was seen, the runs that show it, and the one
// command that fixes it. Each rule (rules.hpp) returns these.

#include <cstdint>
#include <string>
#include <vector>

namespace trace2d::ctl::advice {

struct Finding {
  std::string rule;     // the rule's name, e.g. "slow-hook"
  std::string command;  // the command the runs are grouped under (command_key.hpp)
  std::string subject;  // what costs the time: a region, a child, a worktree
  std::int64_t runs = 0;            // runs of `command` that show the cost
  std::int64_t command_runs = 0;    // all finished runs of `command` in the window
  double seconds = 0;               // time spent in `subject` over `runs`
  double command_seconds = 0;       // those runs' whole elapsed time
  double median_seconds = 0;        // median time in `subject` per run
  std::vector<std::string> sids;    // the runs, most time in `subject` first
  std::string finding;   // one sentence
  std::string evidence;  // the numbers above, for reading
  std::string fix;       // one command line
  // What the rule could not see and the configuration that would let it
  // (empty when it saw all it needs).
  std::string cannot_see;

  [[nodiscard]] double share() const { return command_seconds > 0 ? seconds / command_seconds : 0; }
};

// How much evidence a finding needs beyond each rule's own thresholds.
struct Limits {
  // Runs of a command that must show the cost (the command's own runs for
  // rules about every run; runs with the child for rules about children).
  std::int64_t min_runs = 3;
};

}  // namespace trace2d::ctl::advice
