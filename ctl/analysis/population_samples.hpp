#pragma once
// The samples `compare` tests, read from the database: a population of
// runs (a time window, a git version, a repository), the elapsed time of
// each run grouped by command (command_group.hpp), and for chosen runs the
// time each spent in each region and child process.
//
// A run is a session that finished by itself and succeeded: status
// complete, exit code 0, no signal, an elapsed time. A failed run takes
// another path through git (it stops at the error), so its time says
// nothing of the command's speed.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ctl/query/analysis_queries.hpp"
#include "db/sqlite.hpp"

namespace trace2d::ctl {

struct Population {
  // since, until, and top_level (only what the user ran, as the listings
  // show it; model/command_identity.hpp); its cmds are not used.
  Window window;
  std::optional<std::string> version;  // sessions.exe
  // The worktree or nickname: a run's own, else the first git's under it
  // (model::worktree_sql()), matched as the listings' --repo matches it:
  // the nickname, the worktree, its last components, or `repo_path` (the
  // value made an absolute path, when it is one).
  std::optional<std::string> repo;
  std::string repo_path;
};

struct CommandSamples {
  std::size_t runs = 0;  // in every group together
  // Per command group: each run's elapsed seconds, and the runs' sessions.id
  // in the same order.
  std::map<std::string, std::vector<double>> elapsed;
  std::map<std::string, std::vector<std::int64_t>> sessions;
};

// The population's runs; only the groups in `only` unless it is empty.
[[nodiscard]] CommandSamples load_command_samples(db::Database& db, const Population& population,
                                                  std::span<const std::string> only);

enum class PartKind { region, child };

// What a run spent in one region ("category:label") or one kind of child
// process ("hook:pre-commit"; else the child's class and program,
// "?:git maintenance"): per run in which it occurred, the sum over its
// occurrences (every thread's).
using PartKey = std::pair<PartKind, std::string>;
using PartSamples = std::map<PartKey, std::vector<double>>;

// Per command group, the parts of the runs `runs` names (sessions.id to
// its group): one range scan of the stores when the runs are dense among
// the sessions, else a lookup per run.
[[nodiscard]] std::map<std::string, PartSamples> load_part_samples(
    db::Database& db, const std::unordered_map<std::int64_t, std::string>& runs);

}  // namespace trace2d::ctl
