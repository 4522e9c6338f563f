#include "ctl/analysis/sample_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ctl/analysis/multiple_testing.hpp"

namespace trace2d::ctl {

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::slower: return "slower";
    case Verdict::faster: return "faster";
    case Verdict::no_change: return "no change";
    case Verdict::too_few_runs: return "too few runs";
  }
  throw std::logic_error("unknown verdict");
}

double nearest_rank(std::span<const double> sorted, int percent) {
  if (sorted.empty()) {
    throw std::invalid_argument("nearest_rank of an empty sample");
  }
  const std::size_t rank = (sorted.size() * static_cast<std::size_t>(percent) + 99) / 100;
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

namespace {

SampleSummary summarise(std::span<const double> sorted) {
  SampleSummary summary;
  summary.count = sorted.size();
  if (!sorted.empty()) {
    summary.p50 = nearest_rank(sorted, 50);
    summary.p90 = nearest_rank(sorted, 90);
  }
  return summary;
}

bool large_enough(const SampleComparison& row, const CompareThresholds& thresholds) {
  const double size = std::abs(row.shift->shift);
  if (size == 0) {
    return false;
  }
  const double baseline_median = row.baseline.p50.value_or(0.0);
  return size >= thresholds.min_change_seconds && size >= thresholds.min_change_ratio * baseline_median;
}

}  // namespace

SampleComparison compare_samples(std::vector<double> baseline, std::vector<double> target,
                                 const CompareThresholds& thresholds) {
  std::sort(baseline.begin(), baseline.end());
  std::sort(target.begin(), target.end());
  SampleComparison row;
  row.baseline = summarise(baseline);
  row.target = summarise(target);
  if (baseline.size() < thresholds.min_runs || target.size() < thresholds.min_runs || baseline.empty() ||
      target.empty()) {
    return row;
  }
  row.test = mann_whitney_u(baseline, target);
  const std::size_t rank =
      interval_rank(baseline.size(), target.size(), row.test->exact, row.test->sd, 1 - thresholds.alpha);
  row.shift = hodges_lehmann(baseline, target, rank);
  row.p_adjusted = row.test->p_value;
  return row;
}

void judge(std::span<SampleComparison* const> family, const CompareThresholds& thresholds) {
  std::vector<double> p_values;
  std::vector<SampleComparison*> tested;
  for (SampleComparison* row : family) {
    if (row->test) {
      p_values.push_back(row->test->p_value);
      tested.push_back(row);
    } else {
      row->verdict = Verdict::too_few_runs;
    }
  }
  const std::vector<double> adjusted = benjamini_hochberg(p_values);
  for (std::size_t i = 0; i < tested.size(); ++i) {
    SampleComparison& row = *tested[i];
    row.p_adjusted = adjusted[i];
    if (row.p_adjusted <= thresholds.alpha && large_enough(row, thresholds)) {
      row.verdict = row.shift->shift > 0 ? Verdict::slower : Verdict::faster;
    } else {
      row.verdict = Verdict::no_change;
    }
  }
}

}  // namespace trace2d::ctl
