#include "otlp/export_rules.hpp"

#include <stdexcept>

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
  const auto found = proto::find_command_rule(levels, executable_name(process), process.cmd_name, process.cmd_mode);
  return found != levels.end() ? found->second : default_level;
}

}  // namespace trace2d::otlp
