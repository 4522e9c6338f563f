#pragma once
// Rules for what leaves the host (docs/otlp.md, "Rules"), trace2receiver's
// filter settings: a detail level per command, matched as trace2receiver
// matches its rulesets ("exe:verb#mode", then "exe:verb", then "exe", then
// the default); named rulesets a repository selects by its nickname or by
// a ruleset key (def_params); the data values sent verbatim at any level;
// the summaries and important events of the process span; the PII options.
// The daemon's exporter and `trace2ctl export` both build their spans
// through these rules, so both send the same spans.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/command_percentiles.hpp"
#include "model/process_tree.hpp"
#include "proto/command_name.hpp"

namespace trace2d::otlp {

// trace2receiver's detail levels, each a superset of the one before:
//   drop     no span for the process;
//   summary  the process span alone (with nickname, important data and the
//            region-timer and error-pattern summaries);
//   process  + child spans, the process's data, timers and counters;
//   verbose  + region and thread spans.
enum class DetailLevel : std::uint8_t { drop, summary, process, verbose };

// "drop", "summary", "process", "verbose", also with trace2receiver's "dl:"
// prefix ("dl:drop"); nothing for anything else.
[[nodiscard]] std::optional<DetailLevel> parse_detail_level(std::string_view text);
[[nodiscard]] std::string_view to_string(DetailLevel level);

using proto::program_name;

// The executable's name, as trace2receiver takes it: the basename of
// argv[0] without ".exe" ("git" when there is no argv).
[[nodiscard]] std::string executable_name(const model::ProcessInfo& process);
// trace2receiver's name for a process: "exe:verb#mode" ("git:fetch",
// "git:checkout#branch"), "exe" when the verb is not known (the verb of
// git's "_run_dashed_" is argv[1]: otlp/receiver_names.hpp).
[[nodiscard]] std::string process_name(const model::ProcessInfo& process);

// The value of a def_param as trace2receiver collapses them (its
// trace2.param.set): of the highest scope priority (system, global, local,
// worktree, command, submodule, unknown, any other scope, then no scope: an
// environment variable), the first of equal ones. nullopt when none came.
[[nodiscard]] std::optional<std::string> param_value(const model::ProcessInfo& process, std::string_view param);
// That priority of a def_param's scope (nullopt: no scope, 100).
[[nodiscard]] int param_scope_priority(const std::optional<std::string>& scope);

inline constexpr std::string_view k_default_nickname_key = "otel.trace2.nickname";

// A named ruleset (trace2receiver's "rs:<name>"): a level per command, and
// one for the commands it does not name.
struct Ruleset {
  std::unordered_map<std::string, DetailLevel> levels;
  DetailLevel default_level = DetailLevel::summary;  // trace2receiver's, when a ruleset names none
};

// trace2receiver's summary settings: error and printf messages counted by
// prefix, and regions of a (category, label) counted and timed; each into
// a field of trace2.process.summary.
struct SummaryMessage {
  std::string field;
  std::string prefix;
};
struct SummaryRegion {
  std::string category;
  std::string label;
  std::string count_field;  // "" for none
  std::string time_field;   // "" for none
};

// trace2receiver's important_events: the values of data events of a
// category whose key starts with a prefix, collected in a field of
// trace2.process.important_events at every level but drop.
struct ImportantEvent {
  std::string field;
  std::string category;
  std::string key_prefix;
};

struct ExportRules {
  // Commands no rule names. trace2receiver's default is summary; trace2d's
  // is verbose, the whole tree, as it exported before there were rules.
  DetailLevel default_level = DetailLevel::verbose;
  // "git:status#short", "git:status" or "git" → its level.
  std::unordered_map<std::string, DetailLevel> levels;
  // The def_param whose value is the repository's nickname ("" for none).
  std::string nickname_key{k_default_nickname_key};
  // "category/key" of data events sent verbatim on the process span at any
  // level but drop.
  std::unordered_set<std::string> important_data;
  // The def_param whose value names the ruleset or detail level of a
  // repository's commands ("" for none): wins over the nickname's.
  std::string ruleset_key;
  // A nickname's ruleset ("rs:<name>") or detail level.
  std::unordered_map<std::string, std::string> nicknames;
  // "rs:<name>" → its ruleset.
  std::unordered_map<std::string, Ruleset> rulesets;
  // trace2.pii.username (the sender's user name) and trace2.pii.hostname.
  bool pii_user_name = false;
  bool pii_host_name = false;
  std::vector<SummaryMessage> summary_messages;
  std::vector<SummaryRegion> summary_regions;
  std::vector<ImportantEvent> important_events;
  // Detail by outcome (docs/otlp.md, "Detail by outcome"): a run that
  // failed (its process span is ERROR) or was slow goes at least at this
  // level, whatever the rules above chose, except a drop, which stays a
  // drop (a rule that drops a command is a decision about what leaves the
  // host). nullopt: off.
  std::optional<DetailLevel> outcome_level;
  // Slow: it took at least this many seconds (nullopt: no fixed bound)...
  std::optional<double> slow_seconds;
  // ...or longer than its command's p99 among its sender's runs (when
  // slow_by_p99; filled by whoever reads the store, only for the commands
  // with enough runs to have one: model/command_percentiles.hpp).
  bool slow_by_p99 = false;
  model::CommandPercentiles command_p99;

  // Adds a "pattern=level" rule ("git:status=drop"); throws
  // std::invalid_argument saying what is wrong with it.
  void add_rule(std::string_view rule);
  // Adds "nickname=level" or "nickname=rs:<name>" ("monorepo=verbose").
  void add_nickname(std::string_view entry);
  // Adds a ruleset, "rs:<name> pattern=level ... *=level" (the last: its
  // default; summary without one).
  void add_ruleset(std::string_view entry);
  // Adds "field=prefix" ("fatal_errors=fatal: ").
  void add_summary_message(std::string_view entry);
  // Adds "category/label=count_field,time_field" (either may be empty).
  void add_summary_region(std::string_view entry);
  // Adds "field=category/key_prefix".
  void add_important_event(std::string_view entry);

  // The level for a process, as trace2receiver chooses it: the ruleset or
  // level its ruleset key names, else its nickname's, else these rules
  // (the most specific that names it, else default_level). A ruleset looks
  // the command up as the rules do (three hash lookups at most), else
  // gives its default; a name that is neither a level nor a ruleset gives
  // summary, trace2receiver's builtin default.
  [[nodiscard]] DetailLevel level_of(const model::ProcessInfo& process) const;

  // Why the outcome raises a process above level_of(): "failed", "slow",
  // or "" when it does not (off, not notable, dropped, or already there).
  [[nodiscard]] std::string_view raised_by(const model::ProcessInfo& process, DetailLevel chosen, bool failed) const;
  [[nodiscard]] bool is_slow(const model::ProcessInfo& process) const;
};

// What is wrong with a "pattern=level" rule, or "" when it is fine (for
// the configuration's checks).
[[nodiscard]] std::string detail_rule_problem(std::string_view rule);
// What is wrong with an important-data entry ("category/key"), or "".
[[nodiscard]] std::string important_data_problem(std::string_view entry);
// What is wrong with a nickname, ruleset, summary or important-event
// entry (the forms above), or "".
[[nodiscard]] std::string nickname_problem(std::string_view entry);
[[nodiscard]] std::string ruleset_problem(std::string_view entry);
[[nodiscard]] std::string summary_message_problem(std::string_view entry);
[[nodiscard]] std::string summary_region_problem(std::string_view entry);
[[nodiscard]] std::string important_event_problem(std::string_view entry);
// What is wrong with nickname entries together with the ruleset entries: a
// nickname naming a ruleset none of them defines (its processes would get
// summary, trace2receiver's default for an unknown name, without a word),
// or "".
[[nodiscard]] std::string undefined_ruleset_problem(const std::vector<std::string>& nicknames,
                                                    const std::vector<std::string>& rulesets);

}  // namespace trace2d::otlp
