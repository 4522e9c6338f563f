#pragma once
// What trace2ctl calls a failed run (`sessions --failed`, red rows, the
// report's "failed runs"): a session that exited non-zero, was killed by a
// signal, or never finished (status incomplete: its process vanished
// without an exit event). A process that replaced itself by exec sends no
// exit either (git), or the unknown code -1 (the client library's
// execvp()); when the program it became traced itself (a git: a child
// session with the same pid), it did not fail. `stats` counts the first two
// as failures and the third apart, as incomplete.

#include <functional>

#include "ctl/output/result_set.hpp"

namespace trace2d::ctl {

// SQL condition on the sessions alias `s`.
inline constexpr const char* k_failed_condition =
    "((s.exit_code != 0 AND NOT (s.exit_code = -1 AND EXISTS"
    " (SELECT 1 FROM sessions x WHERE x.parent_sid = s.sid AND x.sid_pid = s.sid_pid)))"
    " OR s.signo IS NOT NULL OR (s.status = 'incomplete' AND NOT EXISTS"
    " (SELECT 1 FROM sessions x WHERE x.parent_sid = s.sid AND x.sid_pid = s.sid_pid)))";

// SQL, on the sessions alias `s`: what `stats` and the command_stats view
// count as a failure (an incomplete session is counted apart).
inline constexpr const char* k_failure_count_condition =
    "((s.exit_code != 0 AND NOT (s.exit_code = -1 AND EXISTS"
    " (SELECT 1 FROM sessions x WHERE x.parent_sid = s.sid AND x.sid_pid = s.sid_pid)))"
    " OR s.signo IS NOT NULL)";

// A predicate on the rows of `result`, from whichever of its columns
// exit_code, signo and status it has (by name). (A row does not say whether
// its process became another by exec: an incomplete one counts.)
[[nodiscard]] std::function<bool(const Row&)> failed_row(const ResultSet& result);

// Replaces the column `first_error` (model::first_error_sql()) by `reason`
// (model::failure_reason(), from the row's exit_code, signo and status):
// why each failed run failed, empty (NULL) for the others.
void present_failure_reason(ResultSet& result);

}  // namespace trace2d::ctl
