#pragma once
// What every trace2ctl command shares, and the registry main.cpp wires up.
//
// Each command lives in its own file and exposes one add_<name>_command()
// that declares its subcommand and flags on the CLI11 app and returns the
// function to run once parsing succeeded. Flags bind to state that function
// owns, so main.cpp needs to know nothing about any command's options.
// A new command: one .cpp here, one declaration below, one line in main.cpp.

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>

#include "ctl/output/format.hpp"
#include "ctl/query/database.hpp"

namespace trace2d::ctl {

// Flags given before (or, thanks to fallthrough, after) the command name.
struct GlobalOptions {
  std::string db_path;
  OutputFormat format = OutputFormat::table;
  // Failures in red in tables: --color, or else whether standard output is
  // a terminal and NO_COLOR is unset (https://no-color.org).
  bool colour = false;
  // --timeout: how long the command's queries may run (zero: no limit).
  std::chrono::milliseconds query_timeout = k_default_query_timeout;
};

struct Context {
  const GlobalOptions& global;
  std::ostream& out;
};

// Thrown for a failed command; main prints the message and exits with 1.
class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown for arguments that cannot go together or are missing in a way
// CLI11 cannot check (a SID or --last); main exits with 2, as for bad usage.
class UsageError : public CommandError {
 public:
  using CommandError::CommandError;
};

// Thrown after a command printed its answer, to exit with `code` (as
// `systemctl status` does: 3 for a daemon not running); `message`, when
// not empty, goes to standard error.
class CommandExit : public std::runtime_error {
 public:
  CommandExit(int code, const std::string& message) : std::runtime_error(message), m_code(code) {}
  [[nodiscard]] int code() const { return m_code; }

 private:
  int m_code;
};

// For commands whose output is not one table (a tree, a record, a page):
// throws CommandError when --format asks for csv or tsv.
void require_table_or_json(const Context& ctx, const std::string& command);

using CommandRunner = std::function<void(const Context&)>;

struct Command {
  CLI::App* app = nullptr;  // owned by the parent CLI::App
  CommandRunner run;
  // Whether its output (as the flags ask for it) goes through the pager on
  // a terminal: not for files, nor for `sessions --follow`. Unset: never.
  std::function<bool()> pages;
};

[[nodiscard]] Command add_advice_command(CLI::App& cli);
[[nodiscard]] Command add_compare_command(CLI::App& cli);
[[nodiscard]] Command add_doctor_command(CLI::App& cli);
[[nodiscard]] Command add_export_command(CLI::App& cli);
[[nodiscard]] Command add_report_command(CLI::App& cli);
[[nodiscard]] Command add_sessions_command(CLI::App& cli);
[[nodiscard]] Command add_show_command(CLI::App& cli);
[[nodiscard]] Command add_sql_command(CLI::App& cli);
[[nodiscard]] Command add_stats_command(CLI::App& cli);
[[nodiscard]] Command add_status_command(CLI::App& cli);
[[nodiscard]] Command add_top_command(CLI::App& cli);
[[nodiscard]] Command add_tree_command(CLI::App& cli);

}  // namespace trace2d::ctl
