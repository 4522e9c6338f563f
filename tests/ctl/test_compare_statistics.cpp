// The statistics behind `trace2ctl compare` (ctl/analysis/): the
// Mann–Whitney U test, the Hodges–Lehmann shift and its interval, the
// Benjamini–Hochberg adjustment and the verdicts, on samples whose answers
// are known by hand or from published tables.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "ctl/analysis/multiple_testing.hpp"
#include "ctl/analysis/rank_test.hpp"
#include "ctl/analysis/sample_comparison.hpp"
#include "ctl/analysis/shift_estimate.hpp"

namespace trace2d::ctl {
namespace {

// Elapsed times as git's are: skewed, never below a floor. A log-normal
// around `median` seconds with log-sd `spread`, from a fixed seed (the
// transform is ours: std::normal_distribution differs between libraries).
std::vector<double> runs(std::uint32_t seed, std::size_t count, double median, double spread) {
  std::mt19937 engine(seed);
  std::vector<double> values;
  const auto uniform = [&engine] { return (static_cast<double>(engine()) + 0.5) / 4294967296.0; };
  while (values.size() < count) {
    const double normal = std::sqrt(-2 * std::log(uniform())) * std::cos(2 * std::numbers::pi * uniform());
    values.push_back(median * std::exp(spread * normal));
  }
  return values;
}

TEST(MannWhitneyU, SeparatedSamplesOfThreeAreExact) {
  // U counts the 9 pairs where the target is larger; 1 of the C(6,3) = 20
  // arrangements is as extreme on each side: p = 2/20.
  const RankTest test = mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6});
  EXPECT_EQ(test.u, 9);
  EXPECT_TRUE(test.exact);
  EXPECT_DOUBLE_EQ(test.p_value, 0.1);
  const RankTest reversed = mann_whitney_u(std::vector<double>{4, 5, 6}, std::vector<double>{1, 2, 3});
  EXPECT_EQ(reversed.u, 0);
  EXPECT_DOUBLE_EQ(reversed.p_value, 0.1);
}

TEST(MannWhitneyU, InterleavedSamplesOfThree) {
  // Pairs with y > x: 2 > 1; 4 > 1, 3; 6 > 1, 3, 5: U = 6. U's counts for
  // 3 and 3 values are 1 1 2 3 3 3 3 2 1 1 (u = 0..9): P(U >= 6) = 7/20.
  const RankTest test = mann_whitney_u(std::vector<double>{1, 3, 5}, std::vector<double>{2, 4, 6});
  EXPECT_EQ(test.u, 6);
  EXPECT_TRUE(test.exact);
  EXPECT_DOUBLE_EQ(test.p_value, 0.7);
}

TEST(MannWhitneyU, ExactDistributionCountsArrangements) {
  const std::vector<double> cdf = exact_u_cdf(3, 3);
  const std::vector<double> counts{1, 1, 2, 3, 3, 3, 3, 2, 1, 1};
  ASSERT_EQ(cdf.size(), counts.size());
  double sum = 0;
  for (std::size_t u = 0; u < counts.size(); ++u) {
    sum += counts[u];
    EXPECT_DOUBLE_EQ(cdf[u], sum / 20) << u;
  }
  // The largest size counted: symmetric, and its extremes are 1/C(50,25).
  const std::vector<double> big = exact_u_cdf(25, 25);
  ASSERT_EQ(big.size(), 626u);
  EXPECT_DOUBLE_EQ(big.back(), 1.0);
  EXPECT_NEAR(big.front(), 1.0 / 126410606437752.0, 1e-27);
  EXPECT_NEAR(big[311], 1 - big[313], 1e-12);  // symmetric about 312.5
  EXPECT_THROW((void)exact_u_cdf(26, 25), std::invalid_argument);
}

TEST(MannWhitneyU, TiesUseTheCorrectedNormalApproximation) {
  // Mid-ranks: 1 | 2 2 2 -> 3 | 3 3 3 -> 6 | 4 -> 8; the target's ranks
  // 3 + 6 + 6 + 8 = 23, U = 23 - 10 = 13. Two runs of three ties:
  // var = 4*4/12 * (9 - 48/56); z = (|13 - 8| - 0.5) / sd.
  const RankTest test = mann_whitney_u(std::vector<double>{1, 2, 2, 3}, std::vector<double>{2, 3, 3, 4});
  EXPECT_EQ(test.u, 13);
  EXPECT_FALSE(test.exact);
  const double sd = std::sqrt(16.0 / 12 * (9 - 48.0 / 56));
  EXPECT_DOUBLE_EQ(test.sd, sd);
  EXPECT_DOUBLE_EQ(test.p_value, std::erfc(4.5 / sd / std::numbers::sqrt2));
  EXPECT_NEAR(test.p_value, 0.172, 0.001);  // R: wilcox.test(c(1,2,2,3), c(2,3,3,4))
}

TEST(MannWhitneyU, LargeSamplesUseTheNormalApproximation) {
  // 30 and 30 values, no ties, the target's all larger: U = 900, z =
  // (450 - 0.5) / sqrt(900 * 61 / 12).
  std::vector<double> baseline;
  std::vector<double> target;
  for (int i = 0; i < 30; ++i) {
    baseline.push_back(i);
    target.push_back(100 + i);
  }
  const RankTest test = mann_whitney_u(baseline, target);
  EXPECT_FALSE(test.exact);
  EXPECT_EQ(test.u, 900);
  EXPECT_DOUBLE_EQ(test.p_value, std::erfc(449.5 / std::sqrt(900.0 * 61 / 12) / std::numbers::sqrt2));
  EXPECT_LT(test.p_value, 1e-10);
}

TEST(MannWhitneyU, IdenticalSamplesAreNotDifferent) {
  const std::vector<double> same{0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1};
  const RankTest test = mann_whitney_u(same, same);
  EXPECT_EQ(test.u, 50);
  EXPECT_DOUBLE_EQ(test.p_value, 1.0);
  const std::vector<double> constant(12, 0.25);
  const RankTest flat = mann_whitney_u(constant, constant);
  EXPECT_EQ(flat.sd, 0);
  EXPECT_DOUBLE_EQ(flat.p_value, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, same).p_value, 1.0);
}

TEST(MannWhitneyU, EightAgainstEightFullySeparated) {
  // 2 of C(16, 8) = 12870 arrangements are this extreme.
  std::vector<double> baseline{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> target{9, 10, 11, 12, 13, 14, 15, 16};
  const RankTest test = mann_whitney_u(baseline, target);
  EXPECT_TRUE(test.exact);
  EXPECT_DOUBLE_EQ(test.p_value, 2.0 / 12870);
}

TEST(NormalDistribution, TailAndQuantile) {
  EXPECT_NEAR(normal_upper_tail(1.959963984540054), 0.025, 1e-15);
  EXPECT_NEAR(normal_quantile_upper(0.025), 1.959963984540054, 1e-12);
  EXPECT_NEAR(normal_quantile_upper(0.005), 2.5758293035489, 1e-12);
  EXPECT_THROW((void)normal_quantile_upper(0), std::invalid_argument);
}

TEST(HodgesLehmann, MedianOfTheDifferences) {
  // Differences 10 9 8 / 11 10 9 / 12 11 10: median 10.
  const std::vector<double> baseline{1, 2, 3};
  const std::vector<double> target{11, 12, 13};
  EXPECT_EQ(hodges_lehmann(baseline, target, 1).shift, 10);
  EXPECT_EQ(hodges_lehmann(baseline, target, 1).low, 8);
  EXPECT_EQ(hodges_lehmann(baseline, target, 1).high, 12);
  EXPECT_EQ(hodges_lehmann(baseline, target, 3).low, 9);
  EXPECT_EQ(hodges_lehmann(baseline, target, 3).high, 11);
  // An even count: the mean of the middle two (1 and 2 of 0, 1, 2, 3).
  EXPECT_EQ(hodges_lehmann(std::vector<double>{0, 1}, std::vector<double>{1, 3}, 1).shift, 1.5);
}

TEST(HodgesLehmann, KthDifferenceAgreesWithEveryPair) {
  std::vector<double> baseline = runs(7, 37, 0.04, 0.5);
  std::vector<double> target = runs(8, 23, 0.05, 0.5);
  target.push_back(baseline[3]);  // a tie, and a zero difference
  std::sort(baseline.begin(), baseline.end());
  std::sort(target.begin(), target.end());
  std::vector<double> all;
  for (const double y : target) {
    for (const double x : baseline) {
      all.push_back(y - x);
    }
  }
  std::sort(all.begin(), all.end());
  for (std::size_t k = 1; k <= all.size(); k += 13) {
    EXPECT_EQ(kth_difference(baseline, target, k), all[k - 1]) << k;
  }
  EXPECT_EQ(kth_difference(baseline, target, 1), all.front());
  EXPECT_EQ(kth_difference(baseline, target, all.size()), all.back());
  EXPECT_THROW((void)kth_difference(baseline, target, 0), std::invalid_argument);
}

TEST(HodgesLehmann, ARealShiftIsRecovered) {
  const std::vector<double> baseline = runs(11, 30, 0.080, 0.15);
  std::vector<double> target = runs(12, 30, 0.080, 0.15);
  for (double& v : target) {
    v += 0.050;
  }
  SampleComparison c = compare_samples(baseline, target, CompareThresholds{});
  ASSERT_TRUE(c.shift);
  EXPECT_NEAR(c.shift->shift, 0.050, 0.010);
  EXPECT_LT(c.shift->low, c.shift->shift);
  EXPECT_GT(c.shift->high, c.shift->shift);
}

TEST(IntervalRank, MatchesTheCriticalValuesTable) {
  // Two-sided critical U for 8 and 8: 7 at 0.01, 13 at 0.05 (U <= critical
  // rejects), so the interval starts at the next order statistic.
  EXPECT_EQ(interval_rank(8, 8, true, 0, 0.99), 8u);
  EXPECT_EQ(interval_rank(8, 8, true, 0, 0.95), 14u);
  // 3 and 3 cannot reach 95%: the whole range.
  EXPECT_EQ(interval_rank(3, 3, true, 0, 0.95), 1u);
  // Normal: 30 and 30 at 95%: 450 - 1.96 * sqrt(900 * 61 / 12) = 317.4.
  EXPECT_EQ(interval_rank(30, 30, false, std::sqrt(900.0 * 61 / 12), 0.95), 317u);
}

TEST(BenjaminiHochberg, AdjustsInInputOrder) {
  const std::vector<double> adjusted = benjamini_hochberg(std::vector<double>{0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(adjusted.size(), 4u);
  EXPECT_DOUBLE_EQ(adjusted[0], 0.02);
  EXPECT_DOUBLE_EQ(adjusted[1], 0.04);
  EXPECT_DOUBLE_EQ(adjusted[2], 0.04);
  EXPECT_DOUBLE_EQ(adjusted[3], 0.02);
  EXPECT_DOUBLE_EQ(benjamini_hochberg(std::vector<double>{0.9, 0.8})[0], 0.9);
  EXPECT_TRUE(benjamini_hochberg({}).empty());
}

SampleComparison judged(std::vector<double> baseline, std::vector<double> target,
                        const CompareThresholds& thresholds = {}) {
  SampleComparison row = compare_samples(std::move(baseline), std::move(target), thresholds);
  SampleComparison* family[] = {&row};
  judge(family, thresholds);
  return row;
}

TEST(Verdict, TooFewRunsIsNeverSlower) {
  // Seven runs each, ten times slower: not enough to say.
  const SampleComparison row = judged(runs(1, 7, 0.010, 0.1), runs(2, 7, 0.100, 0.1));
  EXPECT_EQ(row.verdict, Verdict::too_few_runs);
  EXPECT_FALSE(row.test);
  EXPECT_EQ(row.baseline.count, 7u);
  EXPECT_TRUE(row.baseline.p50);
}

TEST(Verdict, TwentyPercentSlowerWithThirtyRunsIsFound) {
  std::vector<double> target = runs(4, 30, 0.200, 0.1);
  for (double& v : target) {
    v *= 1.2;
  }
  const SampleComparison row = judged(runs(3, 30, 0.200, 0.1), target);
  EXPECT_EQ(row.verdict, Verdict::slower);
  EXPECT_NEAR(row.shift->shift, 0.040, 0.015);
  const SampleComparison back = judged(target, runs(3, 30, 0.200, 0.1));
  EXPECT_EQ(back.verdict, Verdict::faster);
}

TEST(Verdict, ASignificantButSmallChangeIsNoChange) {
  // 3% slower, 200 runs a side, little noise: real, yet below 10%.
  std::vector<double> target = runs(6, 200, 0.100, 0.02);
  for (double& v : target) {
    v *= 1.03;
  }
  const SampleComparison row = judged(runs(5, 200, 0.100, 0.02), target);
  EXPECT_LT(row.p_adjusted, 1e-6);
  EXPECT_EQ(row.verdict, Verdict::no_change);
  // Under 5 ms: 50% of 2 ms.
  std::vector<double> fast = runs(8, 50, 0.002, 0.05);
  for (double& v : fast) {
    v *= 1.5;
  }
  EXPECT_EQ(judged(runs(7, 50, 0.002, 0.05), fast).verdict, Verdict::no_change);
}

TEST(Verdict, IdenticalSamplesAreNoChange) {
  const std::vector<double> same = runs(9, 40, 0.05, 0.3);
  const SampleComparison row = judged(same, same);
  EXPECT_EQ(row.verdict, Verdict::no_change);
  EXPECT_DOUBLE_EQ(row.p_adjusted, 1.0);
  EXPECT_EQ(row.shift->shift, 0);
}

TEST(Verdict, NoiseRaisesNoAlarm) {
  // 400 rows drawn from one distribution, 30 runs a side, judged as one
  // family: none may be called slower or faster.
  std::vector<SampleComparison> rows;
  for (std::uint32_t i = 0; i < 400; ++i) {
    rows.push_back(compare_samples(runs(1000 + 2 * i, 30, 0.05, 0.4), runs(1001 + 2 * i, 30, 0.05, 0.4),
                                   CompareThresholds{}));
  }
  std::vector<SampleComparison*> family;
  for (SampleComparison& row : rows) {
    family.push_back(&row);
  }
  judge(family, CompareThresholds{});
  int smallest_p_below_alpha = 0;
  for (const SampleComparison& row : rows) {
    EXPECT_EQ(row.verdict, Verdict::no_change);
    smallest_p_below_alpha += row.test->p_value < 0.01 ? 1 : 0;
  }
  // Unadjusted, about 1% of them would pass the level by chance.
  EXPECT_LE(smallest_p_below_alpha, 12);
}

TEST(Verdict, TheCorrectionCountsTheWholeFamily) {
  // U = 85 of 100, exact p = 0.0068: alone it passes 0.01; among 10 rows,
  // 9 of them unchanged, its adjusted p is ten times that.
  std::vector<double> baseline;
  std::vector<double> target;
  for (int i = 0; i < 10; ++i) {
    baseline.push_back(0.100 + 0.010 * i);
    target.push_back(0.145 + 0.010 * i + (i % 2 == 0 ? 0.0013 : 0.0007));
  }
  const CompareThresholds thresholds{.min_runs = 8, .alpha = 0.01, .min_change_ratio = 0, .min_change_seconds = 0};
  SampleComparison alone = compare_samples(baseline, target, thresholds);
  EXPECT_EQ(alone.test->u, 85);
  EXPECT_NEAR(alone.test->p_value, 0.0068415, 1e-6);
  std::vector<SampleComparison> rows{alone};
  for (int i = 0; i < 9; ++i) {
    rows.push_back(compare_samples(runs(50 + i, 10, 0.1, 0.2), runs(60 + i, 10, 0.1, 0.2), thresholds));
  }
  SampleComparison* just_one[] = {&alone};
  judge(just_one, thresholds);
  EXPECT_EQ(alone.verdict, Verdict::slower);
  std::vector<SampleComparison*> family;
  for (SampleComparison& row : rows) {
    family.push_back(&row);
  }
  judge(family, thresholds);
  EXPECT_EQ(rows[0].verdict, Verdict::no_change);
}

TEST(Percentiles, NearestRankAsTheViews) {
  const std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(nearest_rank(ten, 50), 5);
  EXPECT_EQ(nearest_rank(ten, 90), 9);
  EXPECT_EQ(nearest_rank(std::vector<double>{7}, 90), 7);
  const std::vector<double> eleven{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_EQ(nearest_rank(eleven, 50), 6);
  EXPECT_EQ(nearest_rank(eleven, 90), 10);
}

}  // namespace
}  // namespace trace2d::ctl
