// trace2ctl show SID: one session's record and its events, in order.

#include <memory>
#include <string>

#include "ctl/commands/command.hpp"
#include "ctl/commands/session_columns.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/analysis_queries.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/owner.hpp"
#include "ctl/query/sid.hpp"

namespace trace2d::ctl {
namespace {

// Values such as a whole argv or a data_json payload would stretch one row
// across several screens; --json gives them uncut.
constexpr std::size_t k_table_value_chars = 80;

struct ShowOptions {
  std::string sid;
};

// Every column of the row, and after `peer_uid` the session's `owner`
// (ctl/query/owner.hpp); for a table (`units` milliseconds) `elapsed` as
// `elapsed_ms`, as every table shows durations.
ResultSet query_session(db::Database& db, const std::string& sid, Units units) {
  std::string columns;
  db::Statement info = db.prepare("SELECT name FROM pragma_table_info('sessions') ORDER BY cid");
  while (info.step()) {
    const std::string name(info.column_text(0));
    columns += columns.empty() ? "" : ", ";
    // Names come from the schema itself, not from the user.
    columns += name == "elapsed" && units == Units::milliseconds ? std::string("round(elapsed * 1000, 3) AS elapsed_ms")
                                                                  : "\"" + name + "\"";
    if (name == "peer_uid") {
      columns += ", " + owner_columns("", Units::milliseconds);
    }
  }
  db::Statement stmt = db.prepare("SELECT " + columns + " FROM sessions WHERE sid = ?");
  stmt.bind_text(1, sid);
  return read_all(stmt);
}

ResultSet query_events(db::Database& db, const std::string& sid) {
  db::Statement stmt = db.prepare(
      "SELECT seq, event, thread, time, label, value FROM events WHERE sid = ? ORDER BY seq");
  stmt.bind_text(1, sid);
  return read_all(stmt);
}

void run_show(const Context& ctx, const ShowOptions& options) {
  require_table_or_json(ctx, "show");
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const std::string sid = resolve_sid(db, options.sid);
  // Both reads in one transaction: a live daemon may add events in between,
  // and the session's event_count should match the events printed.
  db.exec("BEGIN");
  const bool json = ctx.global.format == OutputFormat::json;
  ResultSet session = query_session(db, sid, json ? Units::seconds : Units::milliseconds);
  if (session.rows.empty()) {
    throw CommandError("no session with sid '" + sid + "'");
  }
  const ResultSet events = query_events(db, sid);
  db.exec("COMMIT");
  // argv as a command line in the record; the SID whole.
  present_session_columns(session, db, ctx.global.format, SidForm::whole);

  if (json) {
    std::string text = "{\"session\":";
    append_json_object(text, session.columns, session.rows.front(), {"argv"});
    text += ",\"events\":";
    append_json_array(text, events);
    text += "}\n";
    ctx.out << text;
    return;
  }
  print_record(ctx.out, session.columns, session.rows.front());
  ctx.out << '\n';
  TableStyle style;
  style.limits = {{"value", k_table_value_chars}};
  print_table(ctx.out, events, style);
}

}  // namespace

Command add_show_command(CLI::App& cli) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* app = cli.add_subcommand("show", "Show one session and its events");
  app->add_option("sid", options->sid, "The session's SID, or the short SID `trace2ctl sessions` shows (a unique prefix of its last part)")
      ->required();
  return {app, [options](const Context& ctx) { run_show(ctx, *options); }, [] { return true; }};
}

}  // namespace trace2d::ctl
