#include "ctl/commands/sid_argument.hpp"

#include "ctl/commands/command.hpp"
#include "ctl/commands/window_flags.hpp"
#include "model/tree_loader.hpp"

namespace trace2d::ctl {

CLI::Option* add_sid_argument(CLI::App& app, SidArgument& argument, const std::string& help, bool declare_cmd) {
  CLI::Option* sid = app.add_option("sid", argument.text, help);
  app.add_flag("--last", argument.last,
               "The latest session you ran (the top of the latest process tree) instead of a SID; with --cmd, the "
               "latest run of that command")
      ->excludes(sid);
  if (declare_cmd) {
    app.add_option("--cmd", argument.cmds,
                   "With --last: the latest session of this command (the name shown, e.g. 'fetch', or git's "
                   "cmd_name), whoever ran it")
        ->delimiter(',')
        ->needs("--last");
  }
  return sid;
}

bool given(const SidArgument& argument) { return argument.last || !argument.text.empty(); }

std::string resolve_sid_argument(db::Database& db, const SidArgument& argument, PrefixRoot prefix_root,
                                 const std::vector<std::string>& cmds) {
  if (argument.last) {
    return latest_sid(db, cmds.empty() ? argument.cmds : cmds);
  }
  if (argument.text.empty()) {
    throw UsageError("a session is required: give its sid (whole, or the short SID `trace2ctl sessions` prints), "
                     "or --last (with --cmd NAME for the latest run of a command)");
  }
  return resolve_sid(db, prefix_root == PrefixRoot::allow ? model::normalise_root(argument.text) : argument.text,
                     prefix_root);
}

}  // namespace trace2d::ctl
