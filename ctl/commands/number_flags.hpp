#pragma once
// Checks for numeric flags with messages a user can act on. CLI11's own
// range checks print their bounds with "%f", which for an open upper bound
// is a 300-digit number ("Value -1 not in range 0.000000 to 1797693...").

#include <CLI/CLI.hpp>
#include <string>

namespace trace2d::ctl {

// A whole number at least `min`: "--limit: '-1' is not a whole number of
// 0 or more".
[[nodiscard]] CLI::Validator whole_number_at_least(long long min);

// A number (fractions allowed) from `min` to `max`, `unit` naming what it
// counts ("seconds").
[[nodiscard]] CLI::Validator number_between(double min, double max, const std::string& unit);

// A number (fractions allowed) of 0 or more.
[[nodiscard]] CLI::Validator non_negative_number();

}  // namespace trace2d::ctl
