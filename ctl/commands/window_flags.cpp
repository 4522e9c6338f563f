#include "ctl/commands/window_flags.hpp"

#include <filesystem>
#include <system_error>

#include "ctl/commands/command.hpp"
#include "ctl/query/time_filter.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {

void add_window_flags(CLI::App& app, WindowFlags& flags) {
  app.add_option("--since", flags.since, std::string("Only sessions started at or after this time: ") + k_time_help)
      ->check(CLI::Validator(describe_time_error, "TIME", "time"));
  app.add_option("--until", flags.until, std::string("Only sessions started before this time (as for --since)"))
      ->check(CLI::Validator(describe_time_error, "TIME", "time"));
  add_cmd_option(app, flags.cmds);
}

void add_cmd_option(CLI::App& app, std::vector<std::string>& cmds) {
  app.add_option("--cmd", cmds,
                 "Only sessions of these commands: the name shown (`submodule`, an alias's name) or git's cmd_name "
                 "(`_run_dashed_`); several as --cmd a,b or --cmd a --cmd b")
      ->delimiter(',');
}

void add_all_flag(CLI::App& app, bool& all) {
  app.add_flag("--all", all,
               "Every git process, also those git ran for another (hooks' gits, submodule scripts' rev-parse, an "
               "alias's expansion); by default only what the user ran: sessions started by a shell, an IDE or a "
               "program, not by git");
}

void add_listing_flags(CLI::App& app, WindowFlags& flags) {
  flags.listing = true;
  add_all_flag(app, flags.all);
  app.add_option("--repo", flags.repo,
                 "Only sessions in this repository: its nickname, its worktree's path, or the path's last "
                 "components as the repository column shows them");
}

std::string repo_path_of(const std::string& repo) {
  std::string path;
  if (!repo.empty() && (repo.find('/') != std::string::npos || repo.starts_with('.'))) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::weakly_canonical(std::filesystem::absolute(repo, ec), ec);
    if (!ec) {
      path = absolute.string();
      while (path.size() > 1 && path.ends_with('/')) {
        path.pop_back();
      }
    }
  }
  return path;
}

Window to_window(const WindowFlags& flags) {
  Window window;
  window.cmds = flags.cmds;
  window.top_level = flags.listing && !flags.all;
  window.repo = flags.repo;
  window.repo_path = repo_path_of(flags.repo);
  const std::int64_t now = proto::unix_now_us();
  const auto parse = [now](const std::string& text) -> std::optional<std::int64_t> {
    if (text.empty()) {
      return std::nullopt;
    }
    const auto us = parse_time(text, now);
    if (!us) {
      throw CommandError(describe_time_error(text));
    }
    return us;
  };
  const std::optional<std::int64_t> since = parse(flags.since);
  const std::optional<std::int64_t> until = parse(flags.until);
  if (since && until && *since >= *until) {
    // An empty answer would read as "nothing ran then".
    throw CommandError("the window is empty: --since " + time_as_text(*since) + " is not before --until " +
                       time_as_text(*until));
  }
  if (since) {
    window.since = time_as_text(*since);
  }
  if (until) {
    window.until = time_as_text(*until);
  }
  return window;
}

}  // namespace trace2d::ctl
