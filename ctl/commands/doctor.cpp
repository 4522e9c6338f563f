// trace2ctl doctor: why nothing arrives. Where git sends its events, as git
// decides it (GIT_TRACE2_EVENT, trace2.eventTarget at each scope), whether
// trace2d listens there, and whether the caller can read the database.

#include <cstdint>
#include <string>
#include <vector>

#include "ctl/commands/command.hpp"
#include "ctl/doctor/checks.hpp"
#include "ctl/output/display.hpp"
#include "ctl/output/json.hpp"
#include "ctl/query/database.hpp"
#include "db/sqlite.hpp"

namespace trace2d::ctl {
namespace {

using doctor::Finding;

// Where the system service listens (trace2d.socket): the value the fixes
// suggest.
constexpr const char* k_service_socket = "/run/trace2d/trace2d.sock";

Finding check_database(const Context& ctx) {
  try {
    db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
    const std::int64_t sessions = db.query_int("SELECT count(*) FROM sessions").value_or(0);
    const std::string latest =
        sessions == 0 ? "" : db.query_text("SELECT max(coalesce(start_time, first_received)) FROM sessions").value_or("");
    return {Finding::Verdict::ok, "database",
            ctx.global.db_path + ": you can read it; " + std::to_string(sessions) + " session" +
                (sessions == 1 ? "" : "s") + " visible to you" +
                (latest.empty() ? ""
                                : ", the latest at " +
                                      (ctx.global.format == OutputFormat::json ? latest : display_time(latest))),
            ""};
  } catch (const std::exception& e) {
    return {Finding::Verdict::problem, "database", e.what(), ""};
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
  findings.push_back(check_database(ctx));
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
