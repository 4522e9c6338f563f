#include "otlp/export_rules.hpp"

#include <stdexcept>

namespace trace2d::otlp {

std::string_view program_name(std::string_view path) {
  const auto slash = path.find_last_of("/\\");
  if (slash != std::string_view::npos) {
    path.remove_prefix(slash + 1);
  }
  if (path.size() > 4 && path.substr(path.size() - 4) == ".exe") {
    path.remove_suffix(4);
  }
  return path;
}

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
  std::string name(process.argv.empty() ? std::string_view("git") : program_name(process.argv.front()));
  return name.empty() ? std::string("git") : name;
}

std::string process_name(const model::ProcessInfo& process) {
  std::string name = executable_name(process);
  if (!process.cmd_name.empty()) {
    name += ':' + process.cmd_name;
    if (!process.cmd_mode.empty()) {
      name += '#' + process.cmd_mode;
    }
  }
  return name;
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

std::string important_data_problem(std::string_view entry) {
  const auto slash = entry.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == entry.size()) {
    return "is not category/key (such as fetch/remote)";
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

DetailLevel ExportRules::level_of(const model::ProcessInfo& process) const {
  if (levels.empty()) {
    return default_level;
  }
  // Most specific first, as trace2receiver matches: exe:verb#mode, exe:verb, exe.
  std::string name = executable_name(process);
  const std::size_t exe_length = name.size();
  if (!process.cmd_name.empty()) {
    name += ':' + process.cmd_name;
    const std::size_t verb_length = name.size();
    if (!process.cmd_mode.empty()) {
      name += '#' + process.cmd_mode;
      if (const auto it = levels.find(name); it != levels.end()) {
        return it->second;
      }
      name.resize(verb_length);
    }
    if (const auto it = levels.find(name); it != levels.end()) {
      return it->second;
    }
    name.resize(exe_length);
  }
  if (const auto it = levels.find(name); it != levels.end()) {
    return it->second;
  }
  return default_level;
}

}  // namespace trace2d::otlp
