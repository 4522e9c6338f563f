#pragma once
// How much later the target's values lie than the baseline's: the
// Hodges–Lehmann estimate of the shift (the median of every difference
// target y - baseline x) and its distribution-free confidence interval,
// the order statistics of those differences that the Mann–Whitney U
// distribution picks (Hollander & Wolfe, Nonparametric Statistical
// Methods, 4.3). Robust where a difference of means is not: one slow run
// moves it by one difference of m * n.
//
// The m * n differences are never formed: the k-th smallest is found by
// bisecting on the value, counting the differences below it in one pass
// over the two sorted samples, so the cost is O((m + n) * 64).

#include <cstddef>
#include <span>

namespace trace2d::ctl {

struct ShiftEstimate {
  double shift = 0;  // median of the differences
  double low = 0;    // confidence interval
  double high = 0;
};

// The k-th smallest (1-based, 1 <= k <= m * n) of the differences y - x,
// x from `baseline`, y from `target`, both sorted ascending and not empty.
[[nodiscard]] double kth_difference(std::span<const double> baseline, std::span<const double> target,
                                    std::size_t k);

// The order statistic bounding the confidence interval at `confidence`
// (0.99: 99%): the largest C with P(U <= C - 1) <= (1 - confidence) / 2,
// from the exact distribution when `exact`, else from the normal one with
// standard deviation `u_sd` (tie corrected); at least 1 (then the interval
// is every difference's range, which may be less than `confidence`).
[[nodiscard]] std::size_t interval_rank(std::size_t m, std::size_t n, bool exact, double u_sd, double confidence);

// The shift and its interval [D(C), D(m*n + 1 - C)] for the samples (both
// sorted ascending, not empty), with C from interval_rank().
[[nodiscard]] ShiftEstimate hodges_lehmann(std::span<const double> baseline, std::span<const double> target,
                                           std::size_t interval_rank);

}  // namespace trace2d::ctl
