#include "daemon/export/rule_settings.hpp"

#include <fmt/format.h>

namespace trace2d::exporter {

void RuleSettings::apply(otlp::ExportRules& out) const {
  out.default_level = otlp::parse_detail_level(detail).value_or(otlp::DetailLevel::verbose);
  for (const std::string& rule : rules) {
    out.add_rule(rule);
  }
  out.nickname_key = nickname_key;
  out.important_data.insert(important_data.begin(), important_data.end());
  out.ruleset_key = ruleset_key;
  for (const std::string& entry : nicknames) {
    out.add_nickname(entry);
  }
  for (const std::string& entry : rulesets) {
    out.add_ruleset(entry);
  }
  for (const std::string& entry : summary_messages) {
    out.add_summary_message(entry);
  }
  for (const std::string& entry : summary_regions) {
    out.add_summary_region(entry);
  }
  for (const std::string& entry : important_events) {
    out.add_important_event(entry);
  }
  if (!outcome_detail.empty()) {
    out.outcome_level = otlp::parse_detail_level(outcome_detail);
  }
  if (slow.count() > 0) {
    out.slow_seconds = static_cast<double>(slow.count()) / 1000.0;
  }
}

std::string RuleSettings::detail_problem(const std::string& level) {
  return otlp::parse_detail_level(level) ? std::string()
                                         : fmt::format("must be drop, summary, process or verbose, not '{}'", level);
}

std::string RuleSettings::outcome_detail_problem(const std::string& level) {
  if (level.empty()) {
    return {};
  }
  const auto parsed = otlp::parse_detail_level(level);
  return parsed && *parsed != otlp::DetailLevel::drop
             ? std::string()
             : fmt::format("must be summary, process or verbose (or \"\" for off), not '{}'", level);
}

std::string RuleSettings::rule_problem(const std::string& rule) {
  const std::string problem = otlp::detail_rule_problem(rule);
  return problem.empty() ? problem : fmt::format("lists a rule that {}: '{}'", problem, rule);
}

std::string RuleSettings::important_data_problem(const std::string& entry) {
  const std::string problem = otlp::important_data_problem(entry);
  return problem.empty() ? problem : fmt::format("lists an entry that {}: '{}'", problem, entry);
}

}  // namespace trace2d::exporter
