#pragma once
// How the columns `sid`, `argv` and `owner` read in a table (see
// ctl/output/format.hpp): short SIDs, command lines, user names. JSON, CSV
// and TSV keep sid and argv as stored, argv embedded as an array in JSON,
// and have the owner's name beside the numeric `peer_uid`.

#include <map>
#include <set>
#include <string>

#include "ctl/output/format.hpp"
#include "ctl/output/result_set.hpp"
#include "db/sqlite.hpp"

namespace trace2d::ctl {

enum class SidForm { short_form, whole };

// Marks `argv` as JSON for machine formats; for a table rewrites `argv`
// from its JSON array to a command line and, with SidForm::short_form,
// shortens `sid` (ctl/query/sid.hpp). Rewrites `owner` (a uid, as
// owner_columns() selects it) to the user's name: in a table the name or
// the number (ctl/query/owner.hpp), `-` for no owner; in machine formats
// the name, or null. Columns absent from `result` are left alone.
// A table's status for the row of `sessions s`: a session that lost lines
// reads "complete, 67111 lines lost" (docs/security.md, "Loss accounting").
inline constexpr const char* k_status_with_loss =
    "CASE WHEN s.lines_lost > 0 THEN s.status || ', ' || s.lines_lost || ' lines lost' ELSE s.status END";

// In a table, `repository` (a nickname, or a worktree's path) shows each
// worktree by the fewest last components of its path that no other
// worktree in the rows ends with (`app`, `work/app`), `-` for none.
void present_session_columns(ResultSet& result, db::Database& db, OutputFormat format, SidForm sid_form);

// Each path of `paths` by its shortest ending that no other path has.
[[nodiscard]] std::map<std::string, std::string> shortest_unique_paths(const std::set<std::string>& paths);

}  // namespace trace2d::ctl
