// trace2ctl sessions: the most recent sessions, optionally filtered.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/time_filter.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

constexpr int k_default_limit = 50;

struct SessionsOptions {
  std::string since;
  std::string cmd;
  std::string status;
  int limit = k_default_limit;
};

void run_sessions(const Context& ctx, const SessionsOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);

  // Filters are appended as "AND ..." with one bound parameter each, in order.
  std::string sql =
      "SELECT sid, cmd_name, status, exit_code, elapsed, event_count AS events, start_time"
      "  FROM sessions WHERE 1";
  std::vector<std::string> params;
  if (!options.since.empty()) {
    const auto since_us = parse_since(options.since, proto::unix_now_us());
    if (!since_us) {
      throw CommandError(describe_since_error(options.since));
    }
    // Sessions that never sent "start" still have the time trace2d first saw them.
    sql += " AND COALESCE(start_time, first_received) >= ?";
    params.push_back(since_as_text(*since_us));
  }
  if (!options.cmd.empty()) {
    sql += " AND cmd_name = ?";
    params.push_back(options.cmd);
  }
  if (!options.status.empty()) {
    sql += " AND status = ?";
    params.push_back(options.status);
  }
  sql += " ORDER BY first_received DESC, id DESC";
  if (options.limit > 0) {
    sql += " LIMIT " + std::to_string(options.limit);
  }

  db::Statement stmt = db.prepare(sql);
  for (std::size_t i = 0; i < params.size(); ++i) {
    stmt.bind_text(static_cast<int>(i + 1), params[i]);
  }
  const ResultSet result = read_all(stmt);
  if (ctx.global.format == OutputFormat::json) {
    print_json_array(ctx.out, result);
  } else {
    print_table(ctx.out, result);
  }
}

}  // namespace

Command add_sessions_command(CLI::App& cli) {
  auto options = std::make_shared<SessionsOptions>();
  CLI::App* app = cli.add_subcommand("sessions", "List sessions, newest first");
  app->add_option("--since", options->since,
                  "Only sessions started at or after this time: a UTC time "
                  "(2026-11-21T10:00:00Z, 2026-11-21) or a duration ago (30s, 10m, 2h, 3d, 1w)")
      ->check(CLI::Validator(describe_since_error, "TIME|DURATION", "since"));
  app->add_option("--cmd", options->cmd, "Only sessions of this command (cmd_name, e.g. 'status')");
  app->add_option("--status", options->status, "Only sessions in this state")
      ->check(CLI::IsMember({"running", "complete", "incomplete"}));
  app->add_option("--limit", options->limit, "Show at most N sessions (0: all)")
      ->check(whole_number_at_least(0))
      ->capture_default_str();
  return {app, [options](const Context& ctx) { run_sessions(ctx, *options); }};
}

}  // namespace trace2d::ctl
