#pragma once
// The [otlp] settings that say what leaves the host (docs/otlp.md, "Rules"),
// as the configuration writes them: detail levels and rules, trace2receiver's
// filter settings (the def_param naming a repository's ruleset or level,
// nicknames' rulesets or levels, named rulesets), its summary and important
// events, and detail by outcome. apply() turns them into otlp::ExportRules;
// its PII switches and slow_by_p99 are ExporterOptions' own settings.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/settings/setting.hpp"
#include "otlp/export_rules.hpp"

namespace trace2d::exporter {

struct RuleSettings {
  std::string detail = "verbose";                     // commands no rule names
  std::vector<std::string> rules;                     // "git:status=drop"
  std::string nickname_key = "otel.trace2.nickname";  // a def_param; also the sessions.nickname column
  std::vector<std::string> important_data;            // "category/key", verbatim at any level
  std::string ruleset_key;                            // "" for none
  std::vector<std::string> nicknames;                 // "monorepo=verbose", "big=rs:fetch"
  std::vector<std::string> rulesets;                  // "rs:fetch git:fetch=verbose *=drop"
  std::vector<std::string> summary_messages;          // "field=prefix"
  std::vector<std::string> summary_regions;           // "category/label=count_field,time_field"
  std::vector<std::string> important_events;          // "field=category/key_prefix"
  // Failed and slow runs at least at this level ("": off); slow is at least
  // `slow` (0: no fixed bound) or, with slow_by_p99, slower than the
  // command's p99.
  std::string outcome_detail;
  std::chrono::milliseconds slow{0};

  // Sets what these say in `rules`. The settings' checks (below, and
  // undefined_ruleset_problem across two of them) must have passed:
  // otherwise it throws std::invalid_argument.
  void apply(otlp::ExportRules& rules) const;

  static std::string detail_problem(const std::string& level);
  static std::string outcome_detail_problem(const std::string& level);
  static std::string rule_problem(const std::string& rule);
  static std::string important_data_problem(const std::string& entry);
  // A list entry of trace2receiver's filter settings: `Problem` says what
  // is wrong with it, "" when fine.
  template <std::string (*Problem)(std::string_view)>
  static std::string entry_problem(const std::string& entry) {
    const std::string problem = Problem(entry);
    return problem.empty() ? problem : "lists an entry that " + problem + ": '" + entry + "'";
  }

  // The settings that fill these ([otlp], docs/configuration.md); `Self` is
  // RuleSettings or const RuleSettings.
  template <typename Self, typename Visitor>
  static void visit_settings(Self& o, Visitor& v) {
    using settings::any_text;
    using settings::k_hour_ms;
    using settings::Key;
    using settings::Range;
    v.text(Key{"otlp", "detail", "--otlp-detail", "LEVEL",
               "Detail level of commands no rule names: drop, summary, process, verbose"},
           o.detail, detail_problem);
    v.list(Key{"otlp", "rules", "--otlp-rule", "PATTERN=LEVEL",
               "A command's detail level, e.g. git:status=drop (repeatable)"},
           o.rules, rule_problem);
    v.text(Key{"otlp", "nickname_key", "--otlp-nickname-key", "KEY",
               "The def_param whose value is the repository's nickname"},
           o.nickname_key, any_text);
    v.list(Key{"otlp", "important_data", "--otlp-important-data", "CATEGORY/KEY",
               "data events sent verbatim at every level but drop (repeatable)"},
           o.important_data, important_data_problem);
    v.text(Key{"otlp", "ruleset_key", "--otlp-ruleset-key", "KEY",
               "The def_param whose value names a repository's ruleset or detail level (\"\": none)"},
           o.ruleset_key, any_text);
    v.list(Key{"otlp", "nicknames", "--otlp-nickname", "NICK=LEVEL",
               "A repository nickname's detail level or ruleset (repeatable)"},
           o.nicknames, entry_problem<otlp::nickname_problem>);
    v.list(Key{"otlp", "rulesets", "--otlp-ruleset", "\"rs:NAME PATTERN=LEVEL ... *=LEVEL\"",
               "A named ruleset (repeatable)"},
           o.rulesets, entry_problem<otlp::ruleset_problem>);
    v.list(Key{"otlp", "summary_messages", "--otlp-summary-message", "FIELD=PREFIX",
               "trace2.process.summary: error and printf messages counted by prefix (repeatable)"},
           o.summary_messages, entry_problem<otlp::summary_message_problem>);
    v.list(Key{"otlp", "summary_regions", "--otlp-summary-region", "CAT/LABEL=COUNT,TIME",
               "trace2.process.summary: a region's count and seconds (repeatable)"},
           o.summary_regions, entry_problem<otlp::summary_region_problem>);
    v.list(Key{"otlp", "important_events", "--otlp-important-event", "FIELD=CAT/KEY_PREFIX",
               "trace2.process.important_events: data values by key prefix (repeatable)"},
           o.important_events, entry_problem<otlp::important_event_problem>);
    v.text(Key{"otlp", "outcome_detail", "--otlp-outcome-detail", "LEVEL",
               "Failed and slow runs at least at this level: summary, process, verbose (\"\": off)"},
           o.outcome_detail, outcome_detail_problem);
    v.integer(Key{"otlp", "slow_ms", "--otlp-slow-ms", "MS",
                  "With outcome_detail: a run this long is slow (0: no fixed bound)"},
              o.slow, Range{0, k_hour_ms});
  }
};

}  // namespace trace2d::exporter
