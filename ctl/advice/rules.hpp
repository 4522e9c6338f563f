#pragma once
// The advice rules, one function (and file) each. A rule reads the window's
// runs through the documented views (sessions, regions, children, params,
// data: all of which the restricted, per-user database offers too) and
// returns a finding per command and subject that passed its thresholds.
// docs/trace2ctl.md ("advice") describes each: what it looks at, its
// thresholds, its fix and what it cannot see.

#include <vector>

#include "ctl/advice/finding.hpp"
#include "ctl/advice/rule_support.hpp"

namespace trace2d::ctl::advice {

[[nodiscard]] std::vector<Finding> status_refresh_rule(const RuleScope& scope);
[[nodiscard]] std::vector<Finding> status_untracked_rule(const RuleScope& scope);
[[nodiscard]] std::vector<Finding> slow_hook_rule(const RuleScope& scope);
[[nodiscard]] std::vector<Finding> credential_helper_rule(const RuleScope& scope);
[[nodiscard]] std::vector<Finding> foreground_maintenance_rule(const RuleScope& scope);
[[nodiscard]] std::vector<Finding> ssh_connect_rule(const RuleScope& scope);
[[nodiscard]] std::vector<Finding> ssh_variant_probe_rule(const RuleScope& scope);

}  // namespace trace2d::ctl::advice
