#pragma once
// What the user ran, as opposed to what git ran for them: one notion shared by
// trace2ctl's listings, its report and SQL typed into `trace2ctl sql`.
//
// git names some processes after its own machinery (checked with git 2.39):
//   git submodule status  -> cmd_name `_run_dashed_`, argv [git, submodule, status]
//   git st (alias.st)     -> `_run_dashed_`, then `_run_git_alias_`; an `alias`
//                            event {alias: st, argv: [status]}
//   git sh (alias.sh=!..) -> `_run_shell_alias_`, the same `alias` event
//   git --exec-path       -> `_query_`, argv [git, --exec-path]
// The word the user typed is in argv, after git's global options.
//
// A *top-level* session is one the user (a shell, an IDE, a program using
// the client library) started, not git: it has no parent session of the
// same owner, or its parent session is not a git process.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/sqlite.hpp"

namespace trace2d::model {

// The name a person knows the command by: cmd_name, or for git's internal
// names the dashed command, alias or queried option from `argv` (a JSON
// array, as stored). Without a cmd_name (git stopped at its options or
// repository, before naming the command) the word the user typed after
// `git` and its options; empty when argv says nothing either.
[[nodiscard]] std::string display_name(std::string_view cmd_name, const std::vector<std::string>& argv);
[[nodiscard]] std::string display_name_from_json(std::string_view cmd_name, std::string_view argv_json);

// The repository `argv` names, for a process that reported none (git sends
// no def_repo for a bare repository): a server command's operand
// (`git-upload-pack '/srv/r.git'`, `git receive-pack /srv/r.git`,
// upload-archive), else git's `--work-tree`, `--git-dir` or `-C` (`git
// --git-dir=/srv/r.git gc`, `git -C /nowhere status`), each seen from the
// -C directories before it. As typed: a relative path stays relative (to a
// directory trace2d does not know). Empty when argv names none.
[[nodiscard]] std::string repository_in_argv(const std::vector<std::string>& argv);
[[nodiscard]] std::string repository_in_argv_json(std::string_view argv_json);

// Whether cmd_name is one of git's internal names that display_name()
// replaces (`_run_dashed_`, `_run_git_alias_`, `_run_shell_alias_`, `_query_`).
[[nodiscard]] bool is_internal_name(std::string_view cmd_name);

// Whether a session is a git process: git sends its version as `exe`
// ("2.39.5", "2.45.1.windows.1") and runs as `git`, `git.exe` or a dashed
// `git-<name>`; the client library sends the program's name as `exe`.
[[nodiscard]] bool is_git_process(std::string_view exe, const std::vector<std::string>& argv);
[[nodiscard]] bool is_git_process_json(std::string_view exe, std::string_view argv_json);

// "SIGPIPE" for 13; "signal 99" for a number this system does not name.
[[nodiscard]] std::string signal_name(int signo);

// Why a run failed, in a few words: the first line of the first error
// message (`first_error`, the session's own or else its children's), the
// signal, or that it never finished. Empty for a run that did not fail.
[[nodiscard]] std::string failure_reason(std::optional<std::int64_t> exit_code, std::optional<std::int64_t> signo,
                                         std::string_view status, std::optional<std::string_view> first_error);

// Registers on `db`'s connection the SQL functions
//   t2_display_name(cmd_name, argv) -> TEXT   (display_name_from_json)
//   t2_is_git(exe, argv)            -> 0 or 1 (is_git_process_json)
//   t2_argv_repository(argv)        -> TEXT or NULL (repository_in_argv_json)
// that the conditions below use. Deterministic and side-effect free.
void register_sql_functions(db::Database& db);

// SQL condition on the sessions alias `a`: the session is top-level.
[[nodiscard]] std::string top_level_condition(std::string_view a);

// SQL expressions on the sessions alias `a` (with the functions above
// registered): the display name; the worktree and nickname of the
// repository a session worked in (its own, else the first of its
// descendants': `git submodule` and a git alias open no repository
// themselves, their children do; a bare repository's processes send no
// worktree: the path their argv names stands in, a server command's
// absolute operand before the descendants', the rest after them); the
// first error message of the session,
// else of its descendants.
[[nodiscard]] std::string display_name_sql(std::string_view a);
[[nodiscard]] std::string worktree_sql(std::string_view a);
[[nodiscard]] std::string nickname_sql(std::string_view a);
[[nodiscard]] std::string first_error_sql(std::string_view a);

}  // namespace trace2d::model
