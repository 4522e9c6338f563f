#pragma once
// The aggregate queries behind `top`, `stats` and `report`. Each takes an
// optional time window (sessions started at or after `since`, in the
// stored time format) and reports durations either as the database does
// (seconds, the view's column names: JSON) or in milliseconds rounded for
// reading (`*_ms` columns: tables).

#include <optional>
#include <string>
#include <vector>

#include "ctl/output/result_set.hpp"
#include "db/sqlite.hpp"

namespace trace2d::ctl {

enum class Units { seconds, milliseconds };

struct Window {
  std::optional<std::string> since;  // "YYYY-MM-DDTHH:MM:SS.ffffffZ"
  std::optional<std::string> until;  // exclusive; same format
  // Only these commands, by display name or cmd_name (model/command_identity.hpp); empty: all.
  std::vector<std::string> cmds;
  // Only what the user ran: top-level sessions (model/command_identity.hpp).
  bool top_level = false;
  // Only sessions in this repository: its nickname, its worktree (as given
  // or made absolute in `repo_path`), or the worktree's last path
  // components (`src/app`, as the table's repository column shortens it).
  std::string repo;
  std::string repo_path;
};

// "AND ..." conditions on the sessions alias `s` for `window`, with ?1 its
// start, ?2 its command and ?3 its end, which bind_window() binds. Sessions
// that never sent a time count from when trace2d first saw them.
[[nodiscard]] std::string window_condition(const Window& window);
void bind_window(db::Statement& stmt, const Window& window);

// A dimension of `stats --by` and `top --by`, as a column: `command` (the
// display name), `repository` (nickname, else worktree), `version` (exe),
// `owner` (the uid), `nickname`.
enum class GroupKey { cmd, repo, version, uid, nickname };

// Per value of `keys`: runs, failures (non-zero exit or a signal),
// incomplete sessions, nearest-rank p50/p90/p99 and max of elapsed, total
// elapsed, as the `command_stats` view per cmd_name; most runs first.
[[nodiscard]] ResultSet grouped_stats(db::Database& db, const Window& window, const std::vector<GroupKey>& keys,
                                      Units units);

// Per value of `keys`, its slowest finished session (and how many ran),
// slowest first; at most `limit` groups.
[[nodiscard]] ResultSet slowest_per_group(db::Database& db, const Window& window, const std::vector<GroupKey>& keys,
                                          int limit, Units units);

// Per (category, label) of closed regions: count, p50/p90/p99/max and total
// elapsed; most total time first. Without a window it equals `region_stats`.
[[nodiscard]] ResultSet region_stats(db::Database& db, const Window& window, Units units);

// The `limit` slowest finished sessions, slowest first.
[[nodiscard]] ResultSet slowest_sessions(db::Database& db, const Window& window, int limit, Units units);

// The `limit` slowest closed regions, with their session, slowest first.
[[nodiscard]] ResultSet slowest_regions(db::Database& db, const Window& window, int limit, Units units);

// The `limit` latest failed sessions (see failed.hpp), newest first:
// start_time, command, exit_code, signo, status, elapsed_ms, reason, argv (JSON), sid.
[[nodiscard]] ResultSet failed_sessions(db::Database& db, const Window& window, int limit);

// SIDs of the `limit` slowest finished processes that are the top of their
// tree (no parent session in the database), slowest first.
[[nodiscard]] std::vector<std::string> slowest_roots(db::Database& db, const Window& window, int limit);

}  // namespace trace2d::ctl
