#pragma once
// How the columns `sid`, `argv` and `owner` read in a table (see
// ctl/output/format.hpp): short SIDs, command lines, user names. JSON, CSV
// and TSV keep sid and argv as stored, argv embedded as an array in JSON,
// and have the owner's name beside the numeric `peer_uid`.

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

void present_session_columns(ResultSet& result, db::Database& db, OutputFormat format, SidForm sid_form);

}  // namespace trace2d::ctl
