#pragma once
// Rules for what leaves the host (docs/otlp.md, "Rules"): a detail level per
// command, matched as trace2receiver matches its rulesets ("exe:verb#mode",
// then "exe:verb", then "exe", then the default), the def_param key that
// names a repository's nickname, and the data values sent verbatim at any
// level. The daemon's exporter and `trace2ctl export` both build their
// spans through these rules, so both send the same spans.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

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
// "git:checkout#branch"), "exe" when the verb is not known.
[[nodiscard]] std::string process_name(const model::ProcessInfo& process);

inline constexpr std::string_view k_default_nickname_key = "otel.trace2.nickname";

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

  // Adds a "pattern=level" rule ("git:status=drop"); throws
  // std::invalid_argument saying what is wrong with it.
  void add_rule(std::string_view rule);
  // The level for a process: the most specific rule that names it. Three
  // hash lookups at most, however many rules there are.
  [[nodiscard]] DetailLevel level_of(const model::ProcessInfo& process) const;
};

// What is wrong with a "pattern=level" rule, or "" when it is fine (for
// the configuration's checks).
[[nodiscard]] std::string detail_rule_problem(std::string_view rule);
// What is wrong with an important-data entry ("category/key"), or "".
[[nodiscard]] std::string important_data_problem(std::string_view entry);

}  // namespace trace2d::otlp
