#pragma once
// The two-sided Mann–Whitney U test (Wilcoxon rank-sum): whether the values
// of one sample tend to be larger than another's, assuming nothing about
// their distribution. trace2ctl compare uses it on elapsed times, whose
// distributions are skewed and long-tailed, where a t-test's normality
// does not hold.
//
// The p-value is exact (the permutation distribution of U, counted) when
// neither sample has ties and both together hold at most
// k_exact_max_values values; otherwise it is the normal approximation with
// the tie correction of the variance and a continuity correction of 0.5.

#include <cstddef>
#include <span>
#include <vector>

namespace trace2d::ctl {

// Up to this many values in both samples together, without ties, the
// p-value is counted exactly (C(50, 25) arrangements still fit a double's
// integers exactly).
inline constexpr std::size_t k_exact_max_values = 50;

struct RankTest {
  // U of the target: the pairs (baseline x, target y) with y > x, a tie
  // counting one half. Near n_baseline * n_target / 2 when neither sample
  // tends to be larger; larger when the target's values are.
  double u = 0;
  // The U statistic's standard deviation under the null hypothesis (tie
  // corrected); 0 when every value is equal or a sample is empty.
  double sd = 0;
  double p_value = 1;  // two-sided
  bool exact = false;
};

[[nodiscard]] RankTest mann_whitney_u(std::span<const double> baseline, std::span<const double> target);

// P(U <= u) for every u = 0..m*n under the null hypothesis, for samples of
// sizes m and n without ties: the exact distribution the test counts.
[[nodiscard]] std::vector<double> exact_u_cdf(std::size_t m, std::size_t n);

// The standard normal distribution's upper tail P(Z > z), and its inverse.
[[nodiscard]] double normal_upper_tail(double z);
[[nodiscard]] double normal_quantile_upper(double tail);

}  // namespace trace2d::ctl
