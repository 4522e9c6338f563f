#include "ctl/advice/advice.hpp"

#include <algorithm>

#include "ctl/advice/rules.hpp"
#include "db/event_codec.hpp"

namespace trace2d::ctl::advice {
namespace {

// The values as a JSON array of strings, for json_each() in the rules' SQL.
std::string json_string_array(const std::vector<std::string>& values) {
  std::string json = "[";
  for (const std::string& value : values) {
    if (json.size() > 1) {
      json += ',';
    }
    db::append_sqlite_json_quoted(json, value);
  }
  return json + "]";
}

}  // namespace

std::vector<Finding> find_advice(db::Database& db, const Window& window, const Limits& limits) {
  const RuleScope scope{db, window, limits};
  using Rule = std::vector<Finding> (*)(const RuleScope&);
  constexpr Rule k_rules[] = {status_refresh_rule, status_untracked_rule,       slow_hook_rule,
                              credential_helper_rule, foreground_maintenance_rule, ssh_connect_rule,
                              ssh_variant_probe_rule};
  std::vector<Finding> findings;
  for (const Rule rule : k_rules) {
    std::vector<Finding> found = rule(scope);
    std::move(found.begin(), found.end(), std::back_inserter(findings));
  }
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.seconds > b.seconds; });
  return findings;
}

ResultSet findings_result(const std::vector<Finding>& findings) {
  ResultSet result;
  result.columns = {"rule",  "command", "subject",  "runs", "command_runs", "seconds",    "command_seconds",
                    "median_seconds", "share", "finding", "evidence", "fix",  "cannot_see",   "sids"};
  result.json_columns = {"sids"};
  for (const Finding& f : findings) {
    result.rows.push_back({f.rule, f.command, f.subject, f.runs, f.command_runs, f.seconds, f.command_seconds,
                           f.median_seconds, f.share(), f.finding, f.evidence, f.fix,
                           f.cannot_see.empty() ? Value(Null{}) : Value(f.cannot_see), json_string_array(f.sids)});
  }
  return result;
}

}  // namespace trace2d::ctl::advice
