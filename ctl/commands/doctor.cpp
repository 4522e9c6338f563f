// trace2ctl doctor: why nothing arrives. Where git sends its events, as git
// decides it (GIT_TRACE2_EVENT, trace2.eventTarget at each scope), whether
// trace2d listens there, and whether the caller can read the database.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ctl/commands/command.hpp"
#include "ctl/doctor/checks.hpp"
#include "ctl/output/display.hpp"
#include "ctl/output/json.hpp"
#include "ctl/query/daemon_liveness.hpp"
#include "ctl/query/database.hpp"
#include "db/sqlite.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

using doctor::Finding;

// Where the system service listens (trace2d.socket): the value the fixes
// suggest.
constexpr const char* k_service_socket = "/run/trace2d/trace2d.sock";

// Whether a trace2d writes the database, as `status` judges it: a socket
// that takes connections says nothing of a stopped or hung daemon (the
// kernel queues them), and git's events then go nowhere.
Finding check_daemon(db::Database& db, const std::string& db_path) {
  std::optional<db::Statement> row;
  if (has_object(db, "daemon_status")) {
    row = db.prepare("SELECT pid, updated_at FROM daemon_status WHERE id = 1");
  }
  if (!row || !row->step()) {
    return {Finding::Verdict::note, "daemon", "no trace2d has reported its status into " + db_path + " yet", ""};
  }
  const auto pid = static_cast<pid_t>(row->column_optional_int(0).value_or(0));
  const std::int64_t updated = proto::parse_utc_timestamp(row->column_optional_text(1).value_or("")).value_or(0);
  const std::int64_t now = proto::unix_now_us();
  const std::string ago = std::to_string(std::max<std::int64_t>(0, now - updated) / 1000000) + " s ago";
  const std::string who = "trace2d (pid " + std::to_string(pid) + ")";
  switch (liveness(pid, updated, now)) {
    case Liveness::running:
      return {Finding::Verdict::ok, "daemon", who + " writes this database: it updated its status " + ago, ""};
    case Liveness::not_updating:
      return {Finding::Verdict::problem, "daemon",
              who + " lives but last updated its status " + ago +
                  ": it is stopped or hung, or it cannot write the database (disk full? locked?); what git sends "
                  "is not stored meanwhile",
              "see its log (journalctl -u trace2d) and trace2ctl status; a stopped process goes on with kill -CONT " +
                  std::to_string(pid)};
    case Liveness::not_running:
      break;
  }
  return {
      Finding::Verdict::problem, "daemon",
      "the trace2d that wrote this database (pid " + std::to_string(pid) + ") is not running; its last status " + ago,
      "start it (systemctl start trace2d), or name the database the running trace2d writes (--db)"};
}

void check_database(const Context& ctx, std::vector<Finding>& out) {
  try {
    db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
    const std::int64_t sessions = db.query_int("SELECT count(*) FROM sessions").value_or(0);
    const std::string latest =
        sessions == 0 ? "" : db.query_text("SELECT max(coalesce(start_time, first_received)) FROM sessions").value_or("");
    out.push_back({Finding::Verdict::ok, "database",
                   ctx.global.db_path + ": you can read it; " + std::to_string(sessions) + " session" +
                       (sessions == 1 ? "" : "s") + " visible to you" +
                       (latest.empty() ? ""
                                       : ", the latest at " +
                                             (ctx.global.format == OutputFormat::json ? latest : display_time(latest))),
                   ""});
    try {
      out.push_back(check_daemon(db, ctx.global.db_path));
    } catch (const std::exception& e) {
      out.push_back({Finding::Verdict::note, "daemon", std::string("its status could not be read: ") + e.what(), ""});
    }
  } catch (const std::exception& e) {
    out.push_back({Finding::Verdict::problem, "database", e.what(), ""});
  }
}

const char* verdict_name(Finding::Verdict verdict) {
  switch (verdict) {
    case Finding::Verdict::ok: return "ok";
    case Finding::Verdict::note: return "note";
    case Finding::Verdict::problem: return "problem";
  }
  return "problem";
}

void run_doctor(const Context& ctx) {
  require_table_or_json(ctx, "doctor");
  std::vector<Finding> findings = doctor::check_git_settings(doctor::read_git_settings(), k_service_socket);
  check_database(ctx, findings);
  std::size_t problems = 0;
  if (ctx.global.format == OutputFormat::json) {
    std::string out = "[";
    for (const Finding& f : findings) {
      out += out.size() == 1 ? "{" : ",\n{";
      out += "\"check\":";
      append_json_string(out, f.check);
      out += ",\"verdict\":";
      append_json_string(out, verdict_name(f.verdict));
      out += ",\"detail\":";
      append_json_string(out, f.detail);
      out += ",\"fix\":";
      append_json_string(out, f.fix);
      out += "}";
      problems += f.verdict == Finding::Verdict::problem ? 1 : 0;
    }
    ctx.out << out << "]\n";
  } else {
    for (const Finding& f : findings) {
      ctx.out << verdict_name(f.verdict) << ": " << f.detail << "\n";
      if (!f.fix.empty()) {
        ctx.out << "  fix: " << f.fix << "\n";
      }
      problems += f.verdict == Finding::Verdict::problem ? 1 : 0;
    }
  }
  ctx.out.flush();
  if (problems > 0) {
    throw CommandError(std::to_string(problems) + (problems == 1 ? " problem" : " problems") + " found (above)");
  }
}

}  // namespace

Command add_doctor_command(CLI::App& cli) {
  CLI::App* app = cli.add_subcommand(
      "doctor", "Why nothing arrives: where git sends its events, whether trace2d listens there, the database");
  return {app, [](const Context& ctx) { run_doctor(ctx); }, [] { return false; }};
}

}  // namespace trace2d::ctl
