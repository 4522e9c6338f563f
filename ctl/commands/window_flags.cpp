#include "ctl/commands/window_flags.hpp"

#include "ctl/commands/command.hpp"
#include "ctl/query/time_filter.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {

void add_window_flags(CLI::App& app, WindowFlags& flags) {
  app.add_option("--since", flags.since,
                 "Only sessions started at or after this time: a UTC time (2026-11-21T10:00:00Z, 2026-11-21) "
                 "or a duration ago (30s, 10m, 2h, 3d, 1w)")
      ->check(CLI::Validator(describe_since_error, "TIME|DURATION", "since"));
  app.add_option("--cmd", flags.cmd, "Only sessions of this command (cmd_name, e.g. 'fetch')");
}

Window to_window(const WindowFlags& flags) {
  Window window;
  window.cmd = flags.cmd;
  if (!flags.since.empty()) {
    const auto since_us = parse_since(flags.since, proto::unix_now_us());
    if (!since_us) {
      throw CommandError(describe_since_error(flags.since));
    }
    window.since = since_as_text(*since_us);
  }
  return window;
}

}  // namespace trace2d::ctl
