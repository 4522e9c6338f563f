#pragma once
// One row of `trace2ctl compare`: two samples of elapsed times (seconds),
// their counts and percentiles, the rank test, the shift, and the verdict
// once the row's family has been corrected for multiple testing.
//
// A row is called slower (or faster) only when all of these hold:
//   - each side has at least `min_runs` values (else: too few runs, never
//     slower);
//   - the two-sided Mann–Whitney U test's p-value, adjusted by
//     Benjamini–Hochberg across the rows of its family, is at most `alpha`;
//   - the Hodges–Lehmann shift is at least `min_change_seconds` and at
//     least `min_change_ratio` of the baseline's median,
// so that a real but negligible change (0.3 ms of 40) is not reported.

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ctl/analysis/rank_test.hpp"
#include "ctl/analysis/shift_estimate.hpp"

namespace trace2d::ctl {

struct CompareThresholds {
  std::size_t min_runs = 8;
  double alpha = 0.01;
  double min_change_ratio = 0.10;
  double min_change_seconds = 0.005;
};

enum class Verdict { slower, faster, no_change, too_few_runs };

[[nodiscard]] std::string_view verdict_name(Verdict verdict);

// Nearest-rank percentiles, as the schema's statistics views compute them.
struct SampleSummary {
  std::size_t count = 0;
  std::optional<double> p50;
  std::optional<double> p90;
};

struct SampleComparison {
  SampleSummary baseline;
  SampleSummary target;
  // Absent when a side has fewer than min_runs values: no test is made.
  std::optional<RankTest> test;
  std::optional<ShiftEstimate> shift;  // interval at 1 - alpha
  double p_adjusted = 1;
  Verdict verdict = Verdict::too_few_runs;
};

// The nearest-rank percentile `percent` of `sorted` (ascending, not empty).
[[nodiscard]] double nearest_rank(std::span<const double> sorted, int percent);

// Summaries, test and shift of two samples (any order); the verdict waits
// for judge().
[[nodiscard]] SampleComparison compare_samples(std::vector<double> baseline, std::vector<double> target,
                                               const CompareThresholds& thresholds);

// Corrects the tested rows of one family together (Benjamini–Hochberg) and
// gives every row its verdict.
void judge(std::span<SampleComparison* const> family, const CompareThresholds& thresholds);

}  // namespace trace2d::ctl
