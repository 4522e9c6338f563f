// trace2ctl: queries the database trace2d writes. Parses flags, then runs the
// chosen command (see ctl/commands/command.hpp); every error ends up here.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/output/display.hpp"
#include "ctl/output/pager.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/query_client.hpp"
#include "trace2d/version.hpp"

namespace {

// CLI11 exits with its own codes (100 and up) for bad usage; scripts expect
// the conventional 2.
constexpr int k_usage_exit = 2;
constexpr int k_failure_exit = 1;

// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) {
    d[i][0] = i;
  }
  for (std::size_t j = 0; j <= b.size(); ++j) {
    d[0][j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The word in the command's place, when it names no command: the first
// argument that is neither a flag nor a global option's value. CLI11 would
// only say it "was not expected".
std::optional<std::string> unknown_command(int argc, char** argv, const std::vector<std::string>& names) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--db" || arg == "--format" || arg == "--color" || arg == "--timeout" || arg == "--only-uid") {
      ++i;
      continue;
    }
    if (arg.starts_with("-")) {
      continue;
    }
    for (const std::string& name : names) {
      if (name == arg) {
        return std::nullopt;
      }
    }
    return std::string(arg);
  }
  return std::nullopt;
}

// "did you mean" as git says it: the commands a typo or a prefix away.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& names) {
  std::vector<std::string> close;
  for (const std::string& name : names) {
    const std::size_t allowed = word.size() <= 3 ? 1 : 2;
    if (edit_distance(word, name) <= allowed || (word.size() >= 2 && name.starts_with(word))) {
      close.push_back(name);
    }
  }
  std::string text;
  if (!close.empty()) {
    text += close.size() == 1 ? "\nThe most similar command is\n" : "\nThe most similar commands are\n";
    for (const std::string& name : close) {
      text += "\t" + name + "\n";
    }
  } else {
    text += "\nThe commands are:";
    for (const std::string& name : names) {
      text += " " + name;
    }
    text += "\n";
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trace2d;
  std::ios::sync_with_stdio(false);

  ctl::GlobalOptions global;
  global.db_path = ctl::default_database_path();
  CLI::App cli{"trace2ctl: queries the Git Trace2 telemetry that trace2d collects.\n"
               "Opens the database read-only; safe to run while trace2d writes to it."};
  cli.set_version_flag("--version", std::string("trace2ctl ") + k_version);
  cli.add_option("--db", global.db_path, "SQLite database written by trace2d")
      ->capture_default_str();
  std::string format_name = "table";
  CLI::Option* format_option = cli.add_option("--format", format_name,
                 "table: aligned columns for reading (durations in ms, short SIDs); json, csv, tsv: for programs "
                 "(the schema's column names and units, whole SIDs)")
      ->check(CLI::IsMember({"table", "json", "csv", "tsv"}))
      ->capture_default_str();
  bool json = false;
  cli.add_flag("--json", json,
               "Same as --format json: INTEGER/REAL as numbers, NULL as null, BLOB as a hex string, argv as an "
               "array")
      ->excludes(format_option);
  std::string colour = "auto";
  cli.add_option("--color", colour,
                 "Failed runs in red in tables: auto (when standard output is a terminal and NO_COLOR is unset), "
                 "always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  bool utc = false;
  cli.add_flag("--utc", utc,
               "Times in tables and the HTML report in UTC (by default local time, TZ's zone, with its name); JSON, "
               "CSV and TSV always have UTC");
  bool no_trunc = false;
  cli.add_flag("-l,--no-trunc", no_trunc,
               "Whole cells (argv, reasons, values) on a terminal too; by default a table is cut to the terminal's "
               "width there, and never when standard output is not a terminal");
  bool no_pager = false;
  cli.add_flag("--no-pager", no_pager,
               "Do not page the output (by default, on a terminal, it goes through TRACE2CTL_PAGER, PAGER or "
               "`less`, with LESS=FRX unless LESS is set)");
  double timeout_seconds =
      std::chrono::duration<double>(ctl::k_default_query_timeout).count();
  cli.add_option("--timeout", timeout_seconds,
                 "Stop the command's queries after this many seconds (0: no limit); a long query holds a "
                 "snapshot that keeps trace2d's write-ahead log from shrinking")
      ->check(ctl::number_between(0.0, 366.0 * 86400.0, "seconds"))
      ->capture_default_str();
  // Set by trace2d's query service (docs/security.md, "Per-user access"):
  // every database this process opens shows only this uid's sessions.
  // Anyone may pass it; it only ever shows less.
  std::optional<long long> only_uid;
  cli.add_option("--only-uid", only_uid,
                 "Show only the sessions of this uid, through filtered views (what the query service runs "
                 "for a user who may not read the database)")
      ->check(CLI::Range(0LL, 4294967294LL));
  // Global flags also after the command name: `trace2ctl sessions --json`.
  cli.fallthrough();
  // At most one command; "none" is reported below, since CLI11's own check
  // would also swallow a misspelt command name without naming it.
  cli.require_subcommand(0, 1);

  const std::vector<ctl::Command> commands{
      ctl::add_advice_command(cli),
      ctl::add_compare_command(cli),
      ctl::add_doctor_command(cli),
      ctl::add_export_command(cli),
      ctl::add_report_command(cli),
      ctl::add_sessions_command(cli),
      ctl::add_show_command(cli),
      ctl::add_sql_command(cli),
      ctl::add_stats_command(cli),
      ctl::add_status_command(cli),
      ctl::add_top_command(cli),
      ctl::add_tree_command(cli),
  };

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::vector<std::string> names;
    for (const ctl::Command& command : commands) {
      names.push_back(command.app->get_name());
    }
    if (const std::optional<std::string> word = unknown_command(argc, argv, names);
        word && cli.get_subcommands().empty() && e.get_exit_code() != 0) {
      std::fprintf(stderr, "trace2ctl: '%s' is not a trace2ctl command. See 'trace2ctl --help'.\n%s", word->c_str(),
                   did_you_mean(*word, names).c_str());
      return k_usage_exit;
    }
    const int code = cli.exit(e);
    return code == 0 ? 0 : k_usage_exit;
  }
  if (cli.get_subcommands().empty()) {
    std::fprintf(stderr, "trace2ctl: a command is required\n%s", cli.help().c_str());
    return k_usage_exit;
  }
  global.format = json ? ctl::OutputFormat::json : ctl::parse_output_format(format_name).value();
  const bool terminal = ::isatty(STDOUT_FILENO) == 1;
  // Before a pager takes standard output: the width is the terminal's.
  ctl::set_display({utc, ctl::terminal_columns(STDOUT_FILENO), no_trunc});
  if (colour == "auto") {
    const char* no_colour = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    global.colour = terminal && (no_colour == nullptr || *no_colour == '\0') &&
                    !(term != nullptr && std::string_view(term) == "dumb");
  } else {
    global.colour = colour == "always";
  }
  global.query_timeout = std::chrono::milliseconds(std::llround(timeout_seconds * 1000.0));
  if (only_uid) {
    ctl::restrict_databases_to_uid(static_cast<uid_t>(*only_uid));
  }

  try {
    // Not root, not in the group: trace2d's query service runs the command
    // on the user's own sessions (docs/security.md). Asking for one's own
    // uid is asking for what the service shows; another's is refused here,
    // rather than sent to read the database and told to start the service.
    const bool own_uid_only = only_uid && std::cmp_equal(*only_uid, ::getuid());
    if ((!only_uid || own_uid_only) && ctl::database_forbidden(global.db_path)) {
      std::vector<std::string> args;
      bool colour_given = false;
      for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if ((arg == "--db" || arg == "--only-uid") && i + 1 < argc) {
          ++i;
          continue;
        }
        if (arg.starts_with("--db=") || arg.starts_with("--only-uid=")) {
          continue;
        }
        colour_given = colour_given || arg.starts_with("--color");
        args.emplace_back(arg);
      }
      if (!colour_given) {
        // Decided here, where the terminal and NO_COLOR are known: the
        // command's output may go through this process's pager.
        args.insert(args.begin(), global.colour ? "--color=always" : "--color=never");
      }
      std::optional<ctl::Pager> pager;
      for (const ctl::Command& command : commands) {
        const std::optional<std::string> pager_command = ctl::pager_command();
        if (command.app->parsed() && terminal && !no_pager && command.pages && command.pages() && pager_command) {
          pager.emplace(*pager_command);
        }
      }
      return ctl::run_through_query_service(std::move(args), global.db_path);
    }
    if (only_uid && !own_uid_only && ctl::database_forbidden(global.db_path)) {
      throw ctl::UsageError("--only-uid " + std::to_string(*only_uid) + ": you may read only your own sessions (uid " +
                            std::to_string(::getuid()) +
                            "); run trace2ctl without --only-uid, and trace2d's query "
                            "service shows you those");
    }
    // Declared before the commands run and destroyed after the flush below:
    // the pager gets all of the output, then trace2ctl waits for it.
    std::optional<ctl::Pager> pager;
    for (const ctl::Command& command : commands) {
      if (!command.app->parsed()) {
        continue;
      }
      const std::optional<std::string> pager_command = ctl::pager_command();
      if (terminal && !no_pager && command.pages && command.pages() && pager_command) {
        pager.emplace(*pager_command);
      }
      command.run(ctl::Context{global, std::cout});
    }
    std::cout.flush();
    if (!std::cout) {
      std::fprintf(stderr, "trace2ctl: cannot write the output\n");
      return k_failure_exit;
    }
    return 0;
  } catch (const db::SqliteError& e) {
    std::cout.flush();
    if (ctl::is_query_timeout(e)) {
      std::fprintf(stderr,
                   "trace2ctl: query stopped: it ran longer than --timeout %g s (a query holds a snapshot of "
                   "the database, which keeps trace2d's write-ahead log from shrinking); give a larger "
                   "--timeout, or 0 for none, to let it finish\n",
                   timeout_seconds);
    } else {
      std::fprintf(stderr, "trace2ctl: %s\n", e.what());
    }
    return k_failure_exit;
  } catch (const ctl::CommandExit& e) {
    std::cout.flush();
    if (*e.what() != '\0') {
      std::fprintf(stderr, "trace2ctl: %s\n", e.what());
    }
    return e.code();
  } catch (const ctl::UsageError& e) {
    std::cout.flush();
    std::fprintf(stderr, "trace2ctl: %s\n", e.what());
    return k_usage_exit;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::fprintf(stderr, "trace2ctl: %s\n", e.what());
    return k_failure_exit;
  }
}
