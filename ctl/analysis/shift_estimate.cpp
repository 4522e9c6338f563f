#include "ctl/analysis/shift_estimate.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ctl/analysis/rank_test.hpp"

namespace trace2d::ctl {
namespace {

// Doubles mapped onto unsigned integers in the same order, so that a
// bisection over them ends after at most 64 steps, at adjacent doubles.
std::uint64_t order_key(double value) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  constexpr std::uint64_t sign = std::uint64_t{1} << 63;
  return (bits & sign) != 0 ? ~bits : bits | sign;
}

double from_order_key(std::uint64_t key) {
  constexpr std::uint64_t sign = std::uint64_t{1} << 63;
  return std::bit_cast<double>((key & sign) != 0 ? key & ~sign : ~key);
}

// How many differences y - x are <= d. For a fixed y the differences fall
// as x rises, and the first x with y - x <= d only moves right as y rises,
// so one pass over both samples counts them (comparing the differences as
// they are rounded, so the count steps exactly at the differences' values).
std::size_t count_at_most(std::span<const double> baseline, std::span<const double> target, double d) {
  std::size_t count = 0;
  std::size_t first = 0;
  for (const double y : target) {
    while (first < baseline.size() && !(y - baseline[first] <= d)) {
      ++first;
    }
    count += baseline.size() - first;
  }
  return count;
}

}  // namespace

double kth_difference(std::span<const double> baseline, std::span<const double> target, std::size_t k) {
  if (baseline.empty() || target.empty() || k < 1 || k > baseline.size() * target.size()) {
    throw std::invalid_argument("kth_difference: rank " + std::to_string(k) + " of " +
                                std::to_string(baseline.size() * target.size()) + " differences");
  }
  // Invariant: fewer than k differences are <= lo, at least k are <= hi.
  std::uint64_t lo = order_key(target.front() - baseline.back());
  std::uint64_t hi = order_key(target.back() - baseline.front());
  if (count_at_most(baseline, target, from_order_key(lo)) >= k) {
    return from_order_key(lo);
  }
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (count_at_most(baseline, target, from_order_key(mid)) >= k ? hi : lo) = mid;
  }
  return from_order_key(hi);
}

std::size_t interval_rank(std::size_t m, std::size_t n, bool exact, double u_sd, double confidence) {
  const double tail = (1 - confidence) / 2;
  std::size_t rank = 0;
  if (exact) {
    const std::vector<double> cdf = exact_u_cdf(m, n);
    while (rank < cdf.size() && cdf[rank] <= tail) {
      ++rank;
    }
  } else if (u_sd > 0) {
    const double c = static_cast<double>(m) * static_cast<double>(n) / 2 - normal_quantile_upper(tail) * u_sd;
    rank = c > 0 ? static_cast<std::size_t>(std::floor(c)) : 0;
  }
  return rank < 1 ? 1 : rank;
}

ShiftEstimate hodges_lehmann(std::span<const double> baseline, std::span<const double> target,
                             std::size_t interval_rank) {
  const std::size_t pairs = baseline.size() * target.size();
  ShiftEstimate estimate;
  estimate.shift = pairs % 2 == 1 ? kth_difference(baseline, target, pairs / 2 + 1)
                                  : (kth_difference(baseline, target, pairs / 2) +
                                     kth_difference(baseline, target, pairs / 2 + 1)) /
                                        2;
  const std::size_t rank = std::min(interval_rank, (pairs + 1) / 2);
  estimate.low = kth_difference(baseline, target, rank);
  estimate.high = kth_difference(baseline, target, pairs + 1 - rank);
  return estimate;
}

}  // namespace trace2d::ctl
