#include "model/command_identity.hpp"

#include <sqlite3.h>

#include <array>
#include <cstring>
#include <string.h>  // sigabbrev_np (GNU)

#include "model/tree_loader.hpp"

namespace trace2d::model {
namespace {

constexpr std::array<std::string_view, 4> k_internal_names{"_run_dashed_", "_run_git_alias_", "_run_shell_alias_",
                                                           "_query_"};

// git's options before the command that take the next word as their value
// (git.c, handle_options()); each also has an `--option=value` form.
constexpr std::array<std::string_view, 7> k_options_with_value{
    "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"};

// git's options that answer a question and run no command (`_query_`).
constexpr std::array<std::string_view, 5> k_query_options{"--exec-path", "--html-path", "--man-path", "--info-path",
                                                          "--list-cmds"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  for (const std::string_view n : names) {
    if (n == name) {
      return true;
    }
  }
  return false;
}

std::string_view base_name(std::string_view path) {
  const std::size_t slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The first word after git's own options, or for `_query_` the first query
// option (without its `=value`).
std::string typed_word(std::string_view cmd_name, const std::vector<std::string>& argv) {
  const bool query = cmd_name == "_query_";
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string_view word = argv[i];
    if (word.empty()) {
      continue;
    }
    if (word.front() != '-') {
      if (query) {
        continue;
      }
      return std::string(word);
    }
    const std::string_view option = word.substr(0, word.find('='));
    if (query && contains(k_query_options, option)) {
      return std::string(option);
    }
    if (option == word && contains(k_options_with_value, word)) {
      ++i;  // its value is the next word
    }
  }
  return {};
}

// git's commands whose operand is a repository (git.c runs them in no
// repository of their own: a server's bare repository is opened by path).
constexpr std::array<std::string_view, 3> k_repository_commands{"upload-pack", "receive-pack", "upload-archive"};

// `path` seen from `base` (a directory, maybe relative, maybe empty): as
// git's chdir() of -C sees it.
std::string joined(std::string_view base, std::string_view path) {
  if (base.empty() || path.starts_with('/')) {
    return std::string(path);
  }
  std::string out(base);
  if (!out.ends_with('/')) {
    out += '/';
  }
  return out + std::string(path);
}

std::string_view text_argument(sqlite3_value* value) {
  const unsigned char* text = sqlite3_value_text(value);
  if (text == nullptr) {
    return {};
  }
  return {reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_value_bytes(value))};
}

void sql_display_name(sqlite3_context* ctx, int /*argc*/, sqlite3_value** args) {
  try {
    const std::string name = display_name_from_json(text_argument(args[0]), text_argument(args[1]));
    if (name.empty() && sqlite3_value_type(args[0]) == SQLITE_NULL) {
      sqlite3_result_null(ctx);  // nothing names it
      return;
    }
    sqlite3_result_text(ctx, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT);
  } catch (const std::exception& error) {
    sqlite3_result_error(ctx, error.what(), -1);
  }
}

void sql_argv_repository(sqlite3_context* ctx, int /*argc*/, sqlite3_value** args) {
  try {
    const std::string repository = repository_in_argv_json(text_argument(args[0]));
    if (repository.empty()) {
      sqlite3_result_null(ctx);
      return;
    }
    sqlite3_result_text(ctx, repository.data(), static_cast<int>(repository.size()), SQLITE_TRANSIENT);
  } catch (const std::exception& error) {
    sqlite3_result_error(ctx, error.what(), -1);
  }
}

void sql_is_git(sqlite3_context* ctx, int /*argc*/, sqlite3_value** args) {
  try {
    sqlite3_result_int(ctx, is_git_process_json(text_argument(args[0]), text_argument(args[1])) ? 1 : 0);
  } catch (const std::exception& error) {
    sqlite3_result_error(ctx, error.what(), -1);
  }
}

std::string quoted(std::string_view a, std::string_view column) { return std::string(a) + "." + std::string(column); }

// The session's descendants of the same owner: its SID followed by `/`, as
// a range on the primary key.
// (The unary + keeps SQLite from reading the uid's index, every session of
// that user, instead of the SID range.)
std::string descendants(std::string_view a, std::string_view d) {
  return quoted(d, "sid") + " > " + quoted(a, "sid") + " || '/' AND " + quoted(d, "sid") + " < " + quoted(a, "sid") +
         " || '0' AND +" + quoted(d, "peer_uid") + " IS " + quoted(a, "peer_uid");
}

}  // namespace

bool is_internal_name(std::string_view cmd_name) { return contains(k_internal_names, cmd_name); }

std::string display_name(std::string_view cmd_name, const std::vector<std::string>& argv) {
  if (cmd_name.empty()) {
    // git died before it named the command (`git -C /nowhere status`:
    // "cannot change to"): the run is still the `status` the user typed.
    const bool typed_git = !argv.empty() && (base_name(argv.front()) == "git" || base_name(argv.front()) == "git.exe");
    return typed_git ? typed_word(cmd_name, argv) : std::string();
  }
  if (!is_internal_name(cmd_name)) {
    return std::string(cmd_name);
  }
  std::string word = typed_word(cmd_name, argv);
  return word.empty() ? std::string(cmd_name) : word;
}

std::string display_name_from_json(std::string_view cmd_name, std::string_view argv_json) {
  if (!cmd_name.empty() && !is_internal_name(cmd_name)) {
    return std::string(cmd_name);
  }
  return display_name(cmd_name, argv_json.empty() ? std::vector<std::string>{} : parse_string_array(argv_json));
}

std::string repository_in_argv(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    return {};
  }
  const std::string_view program = base_name(argv.front());
  std::string directory;  // where git's -C options left it
  std::string git_dir;
  std::string work_tree;
  std::size_t command = 1;  // the command word's index in argv
  bool server = false;
  if (program.starts_with("git-")) {
    // A dashed command (sshd runs `git-upload-pack '/srv/r.git'`): its
    // operands follow at once.
    server = contains(k_repository_commands, program.substr(4));
    command = 0;
  } else if (program == "git" || program == "git.exe") {
    for (; command < argv.size(); ++command) {
      const std::string_view word = argv[command];
      if (word.empty() || word.front() != '-') {
        break;
      }
      const std::size_t equals = word.find('=');
      const std::string_view option = word.substr(0, equals);
      const bool separate = option == word && contains(k_options_with_value, word);
      if (separate && command + 1 >= argv.size()) {
        return {};  // git refuses an option without its value
      }
      const std::string_view value = separate                           ? std::string_view(argv[command + 1])
                                     : equals == std::string_view::npos ? std::string_view()
                                                                        : word.substr(equals + 1);
      if (option == "-C" && separate && !value.empty()) {
        directory = joined(directory, value);
      } else if (option == "--git-dir") {
        git_dir = joined(directory, value);
      } else if (option == "--work-tree") {
        work_tree = joined(directory, value);
      }
      command += separate ? 1 : 0;
    }
    server = command < argv.size() && contains(k_repository_commands, argv[command]);
  } else {
    return {};
  }
  if (server) {
    // The repository is the operand: the last word that is not an option.
    for (std::size_t i = argv.size(); i > command + 1; --i) {
      const std::string_view word = argv[i - 1];
      if (!word.empty() && word.front() != '-') {
        return joined(directory, word);
      }
    }
  }
  return !work_tree.empty() ? work_tree : !git_dir.empty() ? git_dir : directory;
}

std::string repository_in_argv_json(std::string_view argv_json) {
  return argv_json.empty() ? std::string() : repository_in_argv(parse_string_array(argv_json));
}

bool is_git_process(std::string_view exe, const std::vector<std::string>& argv) {
  if (exe.empty() || exe.front() < '0' || exe.front() > '9' || argv.empty()) {
    return false;
  }
  const std::string_view program = base_name(argv.front());
  return program == "git" || program == "git.exe" || program.starts_with("git-");
}

bool is_git_process_json(std::string_view exe, std::string_view argv_json) {
  if (exe.empty() || exe.front() < '0' || exe.front() > '9' || argv_json.empty()) {
    return false;
  }
  return is_git_process(exe, parse_string_array(argv_json));
}

std::string signal_name(int signo) {
  const char* abbreviation = signo > 0 ? ::sigabbrev_np(signo) : nullptr;
  return abbreviation != nullptr ? std::string("SIG") + abbreviation : "signal " + std::to_string(signo);
}

std::string failure_reason(std::optional<std::int64_t> exit_code, std::optional<std::int64_t> signo,
                           std::string_view status, std::optional<std::string_view> first_error) {
  std::string reason;
  if (signo) {
    reason = "killed by " + signal_name(static_cast<int>(*signo));
  } else if (status.starts_with("incomplete") && !exit_code) {
    reason = "never finished (killed, or its events were lost)";
  } else if (!exit_code || *exit_code == 0) {
    return {};
  }
  if (first_error && !first_error->empty()) {
    // Its first line: git's further lines are hints ("Use '--' to separate paths ...").
    reason += (reason.empty() ? "" : ": ") + std::string(first_error->substr(0, first_error->find('\n')));
  } else if (reason.empty()) {
    reason = "exit code " + std::to_string(*exit_code) + ", no error message";
  }
  return reason;
}

void register_sql_functions(db::Database& db) {
  constexpr int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  int rc = sqlite3_create_function_v2(db.handle(), "t2_display_name", 2, flags, nullptr, sql_display_name, nullptr,
                                      nullptr, nullptr);
  if (rc == SQLITE_OK) {
    rc = sqlite3_create_function_v2(db.handle(), "t2_is_git", 2, flags, nullptr, sql_is_git, nullptr, nullptr,
                                    nullptr);
  }
  if (rc == SQLITE_OK) {
    rc = sqlite3_create_function_v2(db.handle(), "t2_argv_repository", 1, flags, nullptr, sql_argv_repository, nullptr,
                                    nullptr, nullptr);
  }
  if (rc != SQLITE_OK) {
    db.fail(rc, "registering the SQL functions t2_display_name, t2_is_git and t2_argv_repository");
  }
}

std::string top_level_condition(std::string_view a) {
  return "NOT EXISTS (SELECT 1 FROM sessions tl_p WHERE tl_p.sid = " + quoted(a, "parent_sid") +
         " AND +tl_p.peer_uid IS " + quoted(a, "peer_uid") + " AND t2_is_git(tl_p.exe, tl_p.argv))";
}

std::string display_name_sql(std::string_view a) {
  return "t2_display_name(" + quoted(a, "cmd_name") + ", " + quoted(a, "argv") + ")";
}

std::string worktree_sql(std::string_view a) {
  // A server command's repository, named by its absolute path, comes before
  // the descendants' worktrees: a receive-pack's hook may check out into
  // another (`git --work-tree=/var/www checkout`). What else argv names
  // comes after them: `git -C /repo/sub st` ran in the worktree /repo, as
  // its child says.
  const std::string named = "t2_argv_repository(" + quoted(a, "argv") + ")";
  std::string server_commands;
  for (const std::string_view command : k_repository_commands) {
    server_commands += (server_commands.empty() ? "'" : ", '") + std::string(command) + "'";
  }
  return "coalesce(" + quoted(a, "worktree") + ", CASE WHEN " + quoted(a, "cmd_name") + " IN (" + server_commands +
         ") AND " + named + " LIKE '/%' THEN " + named + " END, (SELECT wt_d.worktree FROM sessions wt_d WHERE " +
         descendants(a, "wt_d") + " AND wt_d.worktree IS NOT NULL ORDER BY wt_d.sid LIMIT 1), " + named + ")";
}

std::string nickname_sql(std::string_view a) {
  return "coalesce(" + quoted(a, "nickname") + ", (SELECT nn_d.nickname FROM sessions nn_d WHERE " +
         descendants(a, "nn_d") + " AND nn_d.nickname IS NOT NULL ORDER BY nn_d.sid LIMIT 1))";
}

std::string first_error_sql(std::string_view a) {
  // Its own first error, else that of its first descendant (in SID order,
  // which for git's SIDs is the order they started) that reported one: a
  // dashed command's script fails through its children. Ordered by SID so
  // that SQLite reads the SID range also when `sessions` is a user's view.
  return "coalesce((SELECT fe_e.msg FROM errors fe_e WHERE fe_e.sid = " + quoted(a, "sid") +
         " AND fe_e.msg IS NOT NULL ORDER BY fe_e.seq LIMIT 1), (SELECT (SELECT fe_e.msg FROM errors fe_e"
         " WHERE fe_e.sid = fe_d.sid AND fe_e.msg IS NOT NULL ORDER BY fe_e.seq LIMIT 1) FROM sessions fe_d WHERE " +
         descendants(a, "fe_d") + " AND fe_d.error_count > 0 ORDER BY fe_d.sid LIMIT 1))";
}

}  // namespace trace2d::model
