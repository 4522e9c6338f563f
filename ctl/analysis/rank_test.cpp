#include "ctl/analysis/rank_test.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace trace2d::ctl {

std::vector<double> exact_u_cdf(std::size_t m, std::size_t n) {
  if (m + n > k_exact_max_values) {
    throw std::invalid_argument("exact U distribution: " + std::to_string(m + n) + " values, at most " +
                                std::to_string(k_exact_max_values) + " are counted exactly");
  }
  // ways[i][u]: arrangements of i baseline and j target values with U = u.
  // The largest of the i + j values is either a target value, above all i
  // baseline values (U grows by i), or a baseline value (U unchanged).
  std::vector<std::vector<double>> ways(m + 1, std::vector<double>(m * n + 1, 0.0));
  for (auto& w : ways) {
    w[0] = 1;
  }
  for (std::size_t j = 1; j <= n; ++j) {
    for (std::size_t i = 1; i <= m; ++i) {
      std::vector<double>& w = ways[i];
      for (std::size_t u = m * n + 1; u-- > 0;) {
        const double target_largest = u >= i ? w[u - i] : 0.0;
        w[u] = target_largest + ways[i - 1][u];
      }
    }
  }
  std::vector<double> cdf = std::move(ways[m]);
  double total = 0;
  for (double& c : cdf) {
    total += c;
    c = total;
  }
  for (double& c : cdf) {
    c /= total;
  }
  return cdf;
}

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

double normal_quantile_upper(double tail) {
  if (!(tail > 0.0 && tail < 1.0)) {
    throw std::invalid_argument("normal quantile: the tail must be between 0 and 1");
  }
  // Bisection: 200 halvings of [-40, 40] reach the double's resolution,
  // and the result is the same on every machine.
  double lo = -40;
  double hi = 40;
  for (int i = 0; i < 200 && lo < hi; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (mid == lo || mid == hi) {
      break;
    }
    (normal_upper_tail(mid) > tail ? lo : hi) = mid;
  }
  return lo + (hi - lo) / 2;
}

RankTest mann_whitney_u(std::span<const double> baseline, std::span<const double> target) {
  RankTest result;
  const std::size_t m = baseline.size();
  const std::size_t n = target.size();
  if (m == 0 || n == 0) {
    return result;
  }
  struct Ranked {
    double value;
    bool is_target;
  };
  std::vector<Ranked> all;
  all.reserve(m + n);
  for (const double v : baseline) {
    all.push_back({v, false});
  }
  for (const double v : target) {
    all.push_back({v, true});
  }
  std::sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) { return a.value < b.value; });
  // Mid-ranks: a run of t tied values shares the mean of its ranks.
  double target_rank_sum = 0;
  double tie_term = 0;  // sum of t^3 - t over the runs of ties
  for (std::size_t first = 0; first < all.size();) {
    std::size_t last = first;
    while (last + 1 < all.size() && all[last + 1].value == all[first].value) {
      ++last;
    }
    const double t = static_cast<double>(last - first + 1);
    const double mid_rank = (static_cast<double>(first + 1) + static_cast<double>(last + 1)) / 2;
    for (std::size_t k = first; k <= last; ++k) {
      if (all[k].is_target) {
        target_rank_sum += mid_rank;
      }
    }
    tie_term += t * t * t - t;
    first = last + 1;
  }
  const double dm = static_cast<double>(m);
  const double dn = static_cast<double>(n);
  const double total = dm + dn;
  result.u = target_rank_sum - dn * (dn + 1) / 2;
  const double variance = dm * dn / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  result.sd = variance > 0 ? std::sqrt(variance) : 0.0;
  if (result.sd == 0) {
    return result;  // every value equal: nothing tells the samples apart
  }
  if (tie_term == 0 && m + n <= k_exact_max_values) {
    const std::vector<double> cdf = exact_u_cdf(m, n);
    // U is an integer without ties; its distribution is symmetric.
    const auto u = static_cast<std::size_t>(std::llround(result.u));
    // P(U >= u) = P(U <= m*n - u) by symmetry, without 1 - cdf's rounding.
    const double lower = cdf[u];
    const double upper = cdf[m * n - u];
    result.p_value = std::min(1.0, 2 * std::min(lower, upper));
    result.exact = true;
    return result;
  }
  const double distance = std::max(0.0, std::abs(result.u - dm * dn / 2) - 0.5);
  result.p_value = std::min(1.0, 2 * normal_upper_tail(distance / result.sd));
  return result;
}

}  // namespace trace2d::ctl
