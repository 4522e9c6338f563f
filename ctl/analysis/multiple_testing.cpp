#include "ctl/analysis/multiple_testing.hpp"

#include <algorithm>
#include <numeric>

namespace trace2d::ctl {

std::vector<double> benjamini_hochberg(std::span<const double> p_values) {
  const std::size_t m = p_values.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Ties keep their input order, so the result does not depend on the sort.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p_values[a] < p_values[b]; });
  std::vector<double> adjusted(m, 1.0);
  double running_min = 1.0;
  for (std::size_t rank = m; rank >= 1; --rank) {
    const std::size_t i = order[rank - 1];
    running_min = std::min(running_min, p_values[i] * static_cast<double>(m) / static_cast<double>(rank));
    adjusted[i] = running_min;
  }
  return adjusted;
}

}  // namespace trace2d::ctl
