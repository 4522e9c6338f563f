// trace2ctl show SID|--last: one session's record and its events, in order.

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ctl/commands/command.hpp"
#include "ctl/commands/session_columns.hpp"
#include "ctl/commands/sid_argument.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/analysis_queries.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/owner.hpp"
#include "ctl/query/failed.hpp"
#include "ctl/query/sid.hpp"
#include "ctl/render/describe.hpp"
#include "model/command_identity.hpp"
#include "model/tree_loader.hpp"

namespace trace2d::ctl {
namespace {

struct ShowOptions {
  SidArgument sid;
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
    if (name == "elapsed" && units == Units::milliseconds) {
      columns += "round(elapsed * 1000, 3) AS elapsed_ms";
    } else if (name == "status" && units == Units::milliseconds) {
      columns += std::string(k_status_with_loss) + " AS status";
    } else {
      columns += "\"" + name + "\"";
    }
    if (name == "peer_uid") {
      columns += ", " + owner_columns("", Units::milliseconds);
    }
  }
  // What the user ran and why it failed (model/command_identity.hpp).
  columns += ", " + model::display_name_sql("s") + " AS command, CASE WHEN " + model::top_level_condition("s") +
             " THEN 1 ELSE 0 END AS top_level, coalesce(" + model::nickname_sql("s") + ", " +
             model::worktree_sql("s") + ") AS repository, " + model::first_error_sql("s") + " AS first_error";
  db::Statement stmt = db.prepare("SELECT " + columns + " FROM sessions s WHERE sid = ?");
  stmt.bind_text(1, sid);
  ResultSet result = read_all(stmt);
  present_failure_reason(result);
  return result;
}

// What an alias expanded to (its `alias` event's argv), as a command line.
std::optional<std::string> alias_expansion(db::Database& db, const std::string& sid) {
  db::Statement stmt = db.prepare(
      "SELECT json_extract(json, '$.alias'), json_extract(json, '$.argv') FROM events WHERE sid = ? AND event = 'alias'"
      " ORDER BY seq LIMIT 1");
  stmt.bind_text(1, sid);
  if (!stmt.step() || stmt.column_type(1) != SQLITE_TEXT) {
    return std::nullopt;
  }
  return render::join_argv(model::parse_string_array(stmt.column_text(1)));
}

// Each region event's region: how long it took (seconds; NULL while open),
// by the seq of its enter and of its leave.
std::map<std::int64_t, Value> region_elapsed_by_seq(db::Database& db, const std::string& sid) {
  db::Statement stmt = db.prepare("SELECT enter_seq, leave_seq, elapsed FROM regions WHERE sid = ?");
  stmt.bind_text(1, sid);
  std::map<std::int64_t, Value> elapsed;
  while (stmt.step()) {
    const Row row = read_row(stmt);
    for (int column : {0, 1}) {
      if (const auto* seq = std::get_if<std::int64_t>(&row[static_cast<std::size_t>(column)])) {
        elapsed[*seq] = row[2];
      }
    }
  }
  return elapsed;
}

// The events in order, each region event with its region's duration
// (`elapsed`); JSON has git's `nesting` and `category` as they are, a
// table indents a region's `category:label` by its nesting and shows the
// duration in milliseconds, as `tree` nests and times regions.
ResultSet query_events(db::Database& db, const std::string& sid, Units units) {
  db::Statement stmt = db.prepare(
      "SELECT seq, event, thread, time, nesting, category, label, value FROM events WHERE sid = ? ORDER BY seq");
  stmt.bind_text(1, sid);
  ResultSet raw = read_all(stmt);
  const std::map<std::int64_t, Value> elapsed = region_elapsed_by_seq(db, sid);
  const auto region_elapsed = [&](const Row& row) -> Value {
    const auto* seq = std::get_if<std::int64_t>(&row[0]);
    const auto found = seq == nullptr ? elapsed.end() : elapsed.find(*seq);
    return found == elapsed.end() ? Value{Null{}} : found->second;
  };
  ResultSet events;
  if (units == Units::seconds) {
    events.columns = {"seq", "event", "thread", "time", "nesting", "category", "label", "elapsed", "value"};
    for (Row& row : raw.rows) {
      Value took = region_elapsed(row);
      row.insert(row.begin() + 7, std::move(took));
      events.rows.push_back(std::move(row));
    }
    return events;
  }
  events.columns = {"seq", "event", "thread", "time", "elapsed_ms", "label", "value"};
  for (Row& row : raw.rows) {
    Value took = region_elapsed(row);
    if (const double* seconds = std::get_if<double>(&took)) {
      took = std::round(*seconds * 1e6) / 1e3;  // milliseconds, to the microsecond
    }
    Value label = std::move(row[6]);
    const auto* event = std::get_if<std::string>(&row[1]);
    if (event != nullptr && (*event == "region_enter" || *event == "region_leave")) {
      const auto* nesting = std::get_if<std::int64_t>(&row[4]);
      const auto* category = std::get_if<std::string>(&row[5]);
      const auto* text = std::get_if<std::string>(&label);
      const std::size_t depth = nesting != nullptr && *nesting > 1 ? static_cast<std::size_t>(*nesting - 1) : 0;
      label = std::string(2 * std::min<std::size_t>(depth, 20), ' ') + (category != nullptr ? *category + ":" : "") +
              (text != nullptr ? *text : "");
    }
    events.rows.push_back({std::move(row[0]), std::move(row[1]), std::move(row[2]), std::move(row[3]),
                           std::move(took), std::move(label), std::move(row[7])});
  }
  return events;
}

// What a session that lost lines says about it (its problem row before
// any event's, seq -1): how many, and why.
std::optional<std::string> lost_lines_problem(db::Database& db, const std::string& sid) {
  db::Statement stmt = db.prepare("SELECT message FROM problems WHERE sid = ? AND seq = -1");
  stmt.bind_text(1, sid);
  if (!stmt.step()) {
    return std::nullopt;
  }
  return std::string(stmt.column_text(0));
}

void run_show(const Context& ctx, const ShowOptions& options) {
  require_table_or_json(ctx, "show");
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const std::string sid = resolve_sid_argument(db, options.sid, PrefixRoot::refuse);
  // Both reads in one transaction: a live daemon may add events in between,
  // and the session's event_count should match the events printed.
  db.exec("BEGIN");
  const bool json = ctx.global.format == OutputFormat::json;
  ResultSet session = query_session(db, sid, json ? Units::seconds : Units::milliseconds);
  if (session.rows.empty()) {
    throw CommandError("no session with sid '" + sid + "'");
  }
  const ResultSet events = query_events(db, sid, json ? Units::seconds : Units::milliseconds);
  const std::optional<std::string> lost_lines = lost_lines_problem(db, sid);
  if (const std::optional<std::string> expansion = alias_expansion(db, sid)) {
    session.columns.emplace_back("alias_expands_to");
    session.rows.front().emplace_back(*expansion);
  }
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
  if (lost_lines) {
    ctx.out << "lost: " << *lost_lines << '\n';
  }
  ctx.out << '\n';
  TableStyle style;
  style.limits = {{"value", k_min_cut_chars}};
  print_table(ctx.out, events, style);
}

}  // namespace

Command add_show_command(CLI::App& cli) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* app = cli.add_subcommand("show", "Show one session and its events");
  add_sid_argument(*app, options->sid,
                   "The session's SID, or the short SID `trace2ctl sessions` shows (a unique prefix of its last part)",
                   true);
  return {app, [options](const Context& ctx) { run_show(ctx, *options); }, [] { return true; }};
}

}  // namespace trace2d::ctl
