#pragma once
// `trace2ctl compare`'s answer: two populations of runs compared per
// command, and within commands per region and child process.
//
// Two families of rows are corrected for multiple testing apart: the
// commands, then the regions and children of the commands looked into
// (DetailScope), which are chosen after the first family's verdicts.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ctl/analysis/population_samples.hpp"
#include "ctl/analysis/sample_comparison.hpp"
#include "db/sqlite.hpp"

namespace trace2d::ctl {

// Which commands' regions and children are compared: those whose own time
// changed (slower or faster), every command's, or none.
enum class DetailScope { changed, all, none };

// The default windows, `compare`'s and the report's Regressions: the last
// 7 days (the target) against the 28 before them (the baseline).
inline constexpr std::int64_t k_compare_day_us = 86'400'000'000;
inline constexpr std::int64_t k_default_target_us = 7 * k_compare_day_us;
inline constexpr std::int64_t k_default_baseline_us = 28 * k_compare_day_us;

struct CompareRequest {
  Population baseline;
  Population target;
  std::vector<std::string> commands;  // only these command groups; empty: all
  DetailScope detail = DetailScope::changed;
  CompareThresholds thresholds;
};

enum class RowKind { command, region, child };

[[nodiscard]] std::string_view row_kind_name(RowKind kind);

struct CompareRow {
  RowKind kind = RowKind::command;
  std::string command;
  std::string name;  // the region's "category:label" or the child's; empty for a command
  SampleComparison comparison;
};

struct CompareResult {
  std::size_t baseline_runs = 0;
  std::size_t target_runs = 0;
  // Each command, followed by its regions and children; commands and the
  // rows under each by verdict (slower, faster, no change, too few runs),
  // then by the target's runs, most first, then by name.
  std::vector<CompareRow> rows;
};

[[nodiscard]] CompareResult compare_populations(db::Database& db, const CompareRequest& request);

}  // namespace trace2d::ctl
