#pragma once
// The one place that says how advice groups runs into "a command": every
// rule's SQL takes the expression from here, so a different notion (display
// names, top-level commands) changes all rules at once.

#include <string>
#include <string_view>

namespace trace2d::ctl::advice {

// An SQL expression over the `sessions` row aliased `alias` naming the
// command a run is counted under; NULL for runs that name none.
[[nodiscard]] std::string command_key(std::string_view alias);

}  // namespace trace2d::ctl::advice
