#pragma once
// The session argument of the commands that show one session or tree
// (`show`, `tree`, `export`): a whole SID, the short SID the tables print,
// or `--last` (with `--cmd`, the latest run of a command). One parser, so
// that every such command takes the same forms.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ctl/query/sid.hpp"
#include "db/sqlite.hpp"

namespace trace2d::ctl {

struct SidArgument {
  std::string text;
  bool last = false;
  // The commands --last looks for: the command's own --cmd option, which
  // add_sid_argument() declares unless the command has one already.
  std::vector<std::string> cmds;
};

// Declares the positional `sid` (described by `help`) and --last; --cmd
// too unless `declare_cmd` is false (the command binds its own --cmd to
// `argument.cmds` or passes them to resolve_sid_argument()).
CLI::Option* add_sid_argument(CLI::App& app, SidArgument& argument, const std::string& help, bool declare_cmd);

// Whether a SID or --last was given.
[[nodiscard]] bool given(const SidArgument& argument);

// The SID the argument names (see resolve_sid(), latest_sid()); `cmds`
// overrides argument.cmds when not empty. Throws CommandError when neither
// a SID nor --last was given.
[[nodiscard]] std::string resolve_sid_argument(db::Database& db, const SidArgument& argument, PrefixRoot prefix_root,
                                               const std::vector<std::string>& cmds = {});

}  // namespace trace2d::ctl
