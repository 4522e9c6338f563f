#include "ctl/commands/window_flags.hpp"

#include "ctl/commands/command.hpp"
#include "ctl/query/time_filter.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {

void add_window_flags(CLI::App& app, WindowFlags& flags) {
  app.add_option("--since", flags.since, std::string("Only sessions started at or after this time: ") + k_time_help)
      ->check(CLI::Validator(describe_time_error, "TIME", "time"));
  app.add_option("--until", flags.until, std::string("Only sessions started before this time (as for --since)"))
      ->check(CLI::Validator(describe_time_error, "TIME", "time"));
  app.add_option("--cmd", flags.cmd, "Only sessions of this command (cmd_name, e.g. 'fetch')");
}

Window to_window(const WindowFlags& flags) {
  Window window;
  window.cmd = flags.cmd;
  const std::int64_t now = proto::unix_now_us();
  const auto parse = [now](const std::string& text) -> std::optional<std::string> {
    if (text.empty()) {
      return std::nullopt;
    }
    const auto us = parse_time(text, now);
    if (!us) {
      throw CommandError(describe_time_error(text));
    }
    return time_as_text(*us);
  };
  window.since = parse(flags.since);
  window.until = parse(flags.until);
  return window;
}

}  // namespace trace2d::ctl
