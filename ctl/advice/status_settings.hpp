#pragma once
// What the two status rules share: whether the runs reported a setting
// (git reports one only when trace2.configParams names it and it is set).

#include <map>
#include <string>
#include <string_view>

#include "ctl/advice/rule_support.hpp"

namespace trace2d::ctl::advice {

// The configParams line that lets the status rules see what they need.
inline constexpr std::string_view k_status_config_params =
    "git config --global trace2.configParams 'core.fsmonitor,core.untrackedCache'";

enum class Setting { on, off, unknown };

// The setting as the group's runs reported it: on when any run reported a
// value other than false (core.fsmonitor may name a hook), off when runs
// reported it and all as false, unknown when none reported it or only as
// `keep` (core.untrackedCache: whatever the index has).
[[nodiscard]] Setting setting_in(const CostGroup& group, const std::map<std::string, std::string>& reported);

}  // namespace trace2d::ctl::advice
