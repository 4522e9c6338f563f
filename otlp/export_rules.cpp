#include "otlp/export_rules.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "otlp/receiver_names.hpp"
#include "proto/command_name.hpp"

namespace trace2d::otlp {

std::optional<DetailLevel> parse_detail_level(std::string_view text) {
  if (text.starts_with("dl:")) {
    text.remove_prefix(3);
  }
  if (text == "drop") {
    return DetailLevel::drop;
  }
  if (text == "summary") {
    return DetailLevel::summary;
  }
  if (text == "process") {
    return DetailLevel::process;
  }
  if (text == "verbose") {
    return DetailLevel::verbose;
  }
  return std::nullopt;
}

std::string_view to_string(DetailLevel level) {
  switch (level) {
    case DetailLevel::drop:
      return "drop";
    case DetailLevel::summary:
      return "summary";
    case DetailLevel::process:
      return "process";
    case DetailLevel::verbose:
      return "verbose";
  }
  return "verbose";
}

std::string executable_name(const model::ProcessInfo& process) {
  return std::string(proto::executable_name(process.argv.empty() ? std::string_view() : process.argv.front()));
}

std::string process_name(const model::ProcessInfo& process) {
  std::string name = name_verb(process);
  if (!receiver_verb(process).empty() && !process.cmd_mode.empty()) {
    name += '#' + process.cmd_mode;
  }
  return name;
}

// trace2receiver's priority of a def_param's scope: the higher wins.
int param_scope_priority(const std::optional<std::string>& scope) {
  if (!scope) {
    return 100;  // no scope: an environment variable (or a git from before scopes were sent)
  }
  static constexpr std::array<std::string_view, 7> k_scopes = {"system",    "global",    "local",  "worktree",
                                                               "command",   "submodule", "unknown"};
  for (std::size_t i = 0; i < k_scopes.size(); ++i) {
    if (*scope == k_scopes[i]) {
      return static_cast<int>(i) + 1;
    }
  }
  return 99;
}

namespace {

// "a=b" split at its first '=' (`last`: its last), both sides non-empty;
// nullopt otherwise.
std::optional<std::pair<std::string_view, std::string_view>> split_pair(std::string_view text, char separator,
                                                                          bool last = false) {
  const auto at = last ? text.rfind(separator) : text.find(separator);
  if (at == std::string_view::npos || at == 0 || at + 1 == text.size()) {
    return std::nullopt;
  }
  return std::pair{text.substr(0, at), text.substr(at + 1)};
}

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto begin = text.find_first_not_of(" \t", at);
    if (begin == std::string_view::npos) {
      break;
    }
    const auto end = text.find_first_of(" \t", begin);
    out.push_back(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    at = end == std::string_view::npos ? text.size() : end;
  }
  return out;
}

bool is_ruleset_name(std::string_view name) { return name.size() > 3 && name.starts_with("rs:"); }

void throw_if(std::string_view what, std::string_view entry, const std::string& problem) {
  if (!problem.empty()) {
    throw std::invalid_argument(std::string(what) + " '" + std::string(entry) + "' " + problem);
  }
}

}  // namespace

std::optional<std::string> param_value(const model::ProcessInfo& process, std::string_view param) {
  const model::ParamInfo* best = nullptr;
  int best_priority = 0;
  for (const model::ParamInfo& p : process.params) {
    if (p.param != param) {
      continue;
    }
    const int priority = param_scope_priority(p.scope);
    if (best == nullptr || priority > best_priority) {  // of equal priority, the first stays
      best = &p;
      best_priority = priority;
    }
  }
  return best != nullptr ? std::optional<std::string>(best->value) : std::nullopt;
}

std::string detail_rule_problem(std::string_view rule) {
  const auto equals = rule.rfind('=');
  if (equals == std::string_view::npos) {
    return "is not pattern=level (such as git:status=drop)";
  }
  if (equals == 0) {
    return "has no command pattern before '='";
  }
  if (!parse_detail_level(rule.substr(equals + 1))) {
    return "has an unknown level '" + std::string(rule.substr(equals + 1)) +
           "' (drop, summary, process or verbose)";
  }
  return {};
}

std::string nickname_problem(std::string_view entry) {
  const auto pair = split_pair(entry, '=', true);
  if (!pair) {
    return "is not nickname=level or nickname=rs:<ruleset> (such as monorepo=verbose)";
  }
  if (!parse_detail_level(pair->second) && !is_ruleset_name(pair->second)) {
    return "names neither a level (drop, summary, process, verbose) nor a ruleset (rs:<name>)";
  }
  return {};
}

std::string ruleset_problem(std::string_view entry) {
  const std::vector<std::string_view> parts = words(entry);
  if (parts.empty() || !is_ruleset_name(parts.front())) {
    return "does not begin with its name, rs:<name> (such as \"rs:status git:status=verbose *=drop\")";
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (std::string problem = detail_rule_problem(parts[i]); !problem.empty()) {
      return "has a rule '" + std::string(parts[i]) + "' that " + problem;
    }
  }
  return {};
}

std::string summary_message_problem(std::string_view entry) {
  return split_pair(entry, '=') ? std::string() : std::string("is not field=prefix (such as fatal_errors=fatal: )");
}

std::string summary_region_problem(std::string_view entry) {
  const auto pair = split_pair(entry, '=', true);
  const auto region = pair ? split_pair(pair->first, '/') : std::nullopt;
  const auto comma = pair ? pair->second.find(',') : std::string_view::npos;
  if (!region || comma == std::string_view::npos || pair->second.find(',', comma + 1) != std::string_view::npos ||
      pair->second.size() == 1) {
    return "is not category/label=count_field,time_field (one of the fields may be empty, such as "
           "index/do_read_index=read_index_count,read_index_seconds)";
  }
  return {};
}

std::string important_event_problem(std::string_view entry) {
  const auto pair = split_pair(entry, '=');
  if (!pair || !split_pair(pair->second, '/')) {
    return "is not field=category/key_prefix (such as gvfs_helper_errors=gvfs-helper/error/)";
  }
  return {};
}

std::string important_data_problem(std::string_view entry) {
  const auto slash = entry.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == entry.size()) {
    return "is not category/key (such as fetch/remote)";
  }
  return {};
}

std::string undefined_ruleset_problem(const std::vector<std::string>& nicknames,
                                      const std::vector<std::string>& rulesets) {
  for (const std::string& nickname : nicknames) {
    const auto pair = split_pair(nickname, '=', true);
    if (!pair || !is_ruleset_name(pair->second)) {
      continue;
    }
    const bool defined = std::any_of(rulesets.begin(), rulesets.end(), [&](const std::string& ruleset) {
      const std::vector<std::string_view> parts = words(ruleset);
      return !parts.empty() && parts.front() == pair->second;
    });
    if (!defined) {
      return "'" + nickname + "' names the ruleset '" + std::string(pair->second) +
             "', which no ruleset entry defines (its processes would get summary)";
    }
  }
  return {};
}

void ExportRules::add_rule(std::string_view rule) {
  if (std::string problem = detail_rule_problem(rule); !problem.empty()) {
    throw std::invalid_argument("detail rule '" + std::string(rule) + "' " + problem);
  }
  const auto equals = rule.rfind('=');
  levels.insert_or_assign(std::string(rule.substr(0, equals)), *parse_detail_level(rule.substr(equals + 1)));
}

void ExportRules::add_nickname(std::string_view entry) {
  throw_if("nickname", entry, nickname_problem(entry));
  const auto pair = *split_pair(entry, '=', true);
  nicknames.insert_or_assign(std::string(pair.first), std::string(pair.second));
}

void ExportRules::add_ruleset(std::string_view entry) {
  throw_if("ruleset", entry, ruleset_problem(entry));
  const std::vector<std::string_view> parts = words(entry);
  Ruleset ruleset;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto equals = parts[i].rfind('=');
    const std::string_view pattern = parts[i].substr(0, equals);
    const DetailLevel level = *parse_detail_level(parts[i].substr(equals + 1));
    if (pattern == "*") {
      ruleset.default_level = level;
    } else {
      ruleset.levels.insert_or_assign(std::string(pattern), level);
    }
  }
  rulesets.insert_or_assign(std::string(parts.front()), std::move(ruleset));
}

void ExportRules::add_summary_message(std::string_view entry) {
  throw_if("summary message", entry, summary_message_problem(entry));
  const auto pair = *split_pair(entry, '=');
  summary_messages.push_back(SummaryMessage{std::string(pair.first), std::string(pair.second)});
}

void ExportRules::add_summary_region(std::string_view entry) {
  throw_if("summary region", entry, summary_region_problem(entry));
  const auto pair = *split_pair(entry, '=', true);
  const auto region = *split_pair(pair.first, '/');
  const auto comma = pair.second.find(',');
  summary_regions.push_back(SummaryRegion{std::string(region.first), std::string(region.second),
                                          std::string(pair.second.substr(0, comma)),
                                          std::string(pair.second.substr(comma + 1))});
}

void ExportRules::add_important_event(std::string_view entry) {
  throw_if("important event", entry, important_event_problem(entry));
  const auto pair = *split_pair(entry, '=');
  const auto event = *split_pair(pair.second, '/');
  important_events.push_back(ImportantEvent{std::string(pair.first), std::string(event.first), std::string(event.second)});
}

DetailLevel ExportRules::level_of(const model::ProcessInfo& process) const {
  const auto lookup = [&process](const std::unordered_map<std::string, DetailLevel>& table,
                                 DetailLevel otherwise) {
    const auto found =
        proto::find_command_rule(table, executable_name(process), receiver_verb(process), process.cmd_mode);
    return found != table.end() ? found->second : otherwise;
  };
  // trace2receiver's order: the ruleset key, then the nickname, then the default.
  std::optional<std::string> chosen;
  if (!ruleset_key.empty()) {
    chosen = param_value(process, ruleset_key);
  }
  if ((!chosen || chosen->empty()) && !nicknames.empty() && !nickname_key.empty()) {
    chosen.reset();
    if (const std::optional<std::string> nickname = param_value(process, nickname_key); nickname && !nickname->empty()) {
      if (const auto found = nicknames.find(*nickname); found != nicknames.end()) {
        chosen = found->second;
      }
    }
  }
  if (!chosen || chosen->empty()) {
    return levels.empty() ? default_level : lookup(levels, default_level);
  }
  if (const std::optional<DetailLevel> level = parse_detail_level(*chosen)) {
    return *level;
  }
  if (const auto ruleset = rulesets.find(*chosen); ruleset != rulesets.end()) {
    return lookup(ruleset->second.levels, ruleset->second.default_level);
  }
  return DetailLevel::summary;
}

bool ExportRules::is_slow(const model::ProcessInfo& process) const {
  if (!process.elapsed) {
    return false;
  }
  if (slow_seconds && *process.elapsed >= *slow_seconds) {
    return true;
  }
  if (!slow_by_p99) {
    return false;
  }
  const auto p99 = command_p99.p99(process.owner.uid, process.cmd_name);
  return p99 && *process.elapsed > *p99;
}

std::string_view ExportRules::raised_by(const model::ProcessInfo& process, DetailLevel chosen, bool failed) const {
  if (!outcome_level || chosen == DetailLevel::drop || chosen >= *outcome_level) {
    return {};
  }
  if (failed) {
    return "failed";
  }
  return is_slow(process) ? "slow" : std::string_view();
}

}  // namespace trace2d::otlp
