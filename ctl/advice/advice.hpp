#pragma once
// `trace2ctl advice`: every rule (rules.hpp) over one window, and the
// findings as one result set for the output layer.

#include <vector>

#include "ctl/advice/finding.hpp"
#include "ctl/output/result_set.hpp"
#include "ctl/query/analysis_queries.hpp"
#include "db/sqlite.hpp"

namespace trace2d::ctl::advice {

// The findings of all rules, most time at stake first.
[[nodiscard]] std::vector<Finding> find_advice(db::Database& db, const Window& window, const Limits& limits);

// Columns: rule, command, subject, runs, command_runs, seconds,
// command_seconds, median_seconds, share, finding, evidence, fix,
// cannot_see, sids (a JSON array).
[[nodiscard]] ResultSet findings_result(const std::vector<Finding>& findings);

}  // namespace trace2d::ctl::advice
