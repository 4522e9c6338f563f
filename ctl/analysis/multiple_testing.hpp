#pragma once
// Many rows tested at once: at a level of 0.01, one row in a hundred
// unchanged rows would pass by chance. The Benjamini–Hochberg procedure
// keeps the expected share of false findings among the rows reported at
// the level (the false discovery rate); when nothing changed at all, the
// chance of reporting anything stays at the level. It holds for
// independent tests and for positively dependent ones (Benjamini &
// Yekutieli 2001), as a command's time and its regions' are.

#include <span>
#include <vector>

namespace trace2d::ctl {

// Adjusted p-values, in the order given: a row is reported at level q when
// its adjusted value is <= q. p(i) * m / rank(i), made monotone from the
// largest down, at most 1.
[[nodiscard]] std::vector<double> benjamini_hochberg(std::span<const double> p_values);

}  // namespace trace2d::ctl
