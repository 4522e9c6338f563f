// trace2ctl: queries the database trace2d writes. Parses flags, then runs the
// chosen command (see ctl/commands/command.hpp); every error ends up here.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <vector>

#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/query/database.hpp"
#include "trace2d/version.hpp"

namespace {

// CLI11 exits with its own codes (100 and up) for bad usage; scripts expect
// the conventional 2.
constexpr int k_usage_exit = 2;
constexpr int k_failure_exit = 1;

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
  bool json = false;
  cli.add_flag("--json", json,
               "Print JSON instead of a table: INTEGER/REAL as numbers, NULL as null, "
               "BLOB as a hex string");
  double timeout_seconds =
      std::chrono::duration<double>(ctl::k_default_query_timeout).count();
  cli.add_option("--timeout", timeout_seconds,
                 "Stop the command's queries after this many seconds (0: no limit); a long query holds a "
                 "snapshot that keeps trace2d's write-ahead log from shrinking")
      ->check(ctl::number_between(0.0, 366.0 * 86400.0, "seconds"))
      ->capture_default_str();
  // Global flags also after the command name: `trace2ctl sessions --json`.
  cli.fallthrough();
  // At most one command; "none" is reported below, since CLI11's own check
  // would also swallow a misspelt command name without naming it.
  cli.require_subcommand(0, 1);

  const std::vector<ctl::Command> commands{
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
    const int code = cli.exit(e);
    return code == 0 ? 0 : k_usage_exit;
  }
  if (cli.get_subcommands().empty()) {
    std::fprintf(stderr, "trace2ctl: a command is required\n%s", cli.help().c_str());
    return k_usage_exit;
  }
  global.format = json ? ctl::OutputFormat::json : ctl::OutputFormat::table;
  global.query_timeout = std::chrono::milliseconds(std::llround(timeout_seconds * 1000.0));

  try {
    for (const ctl::Command& command : commands) {
      if (command.app->parsed()) {
        command.run(ctl::Context{global, std::cout});
      }
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
  } catch (const std::exception& e) {
    std::cout.flush();
    std::fprintf(stderr, "trace2ctl: %s\n", e.what());
    return k_failure_exit;
  }
}
