// trace2ctl sessions: the most recent sessions, optionally filtered, or
// (--follow) sessions as they finish, like `journalctl -f`.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ctl/commands/command.hpp"
#include "ctl/commands/number_flags.hpp"
#include "ctl/commands/session_columns.hpp"
#include "ctl/commands/window_flags.hpp"
#include "ctl/output/delimited.hpp"
#include "ctl/output/display.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/print_result.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/failed.hpp"
#include "ctl/query/owner.hpp"
#include "db/read_transaction.hpp"
#include "model/command_identity.hpp"

namespace trace2d::ctl {
namespace {

constexpr int k_default_session_rows = 50;
// As `journalctl -f`: the last few, then what comes.
constexpr int k_default_follow_limit = 10;
constexpr auto k_follow_interval = std::chrono::milliseconds(250);

struct SessionsOptions {
  WindowFlags window;
  std::string status;
  bool failed = false;
  bool last = false;
  bool follow = false;
  bool full_sid = false;
  bool reverse = false;
  std::optional<int> limit;
};

// Newest first by when git says each started (its `version` event), as git
// log lists commits; sessions that never sent a start time come after the
// rest (NULL sorts last in DESC), in the order trace2d saw them.
constexpr const char* k_newest_first = " ORDER BY s.start_time DESC, s.first_received DESC, s.id DESC";

// The columns, by format: see ctl/output/format.hpp. The table's argv is
// rewritten from JSON to a command line, its sid shortened (decorate()).
// The owner (a uid here) becomes a name in decorate(). A session that lost
// lines is never shown as plainly whole: the table's status says how many
// (docs/security.md, "Loss accounting"), the machine formats have the count
// as a column of its own.
// `command` is the display name and `repository` the nickname or worktree
// (model/command_identity.hpp); with --failed, `reason` says why each
// failed (present_failure_reason()).
std::string select_columns(OutputFormat format, bool failed) {
  const std::string command = model::display_name_sql("s") + " AS command";
  const std::string repository =
      "coalesce(" + model::nickname_sql("s") + ", " + model::worktree_sql("s") + ") AS repository";
  const std::string reason = failed ? ", " + model::first_error_sql("s") + " AS first_error" : std::string();
  if (is_machine_format(format)) {
    return "s.sid, s.start_time, " + owner_columns("s", Units::seconds) + ", " + command + ", s.cmd_name, " +
           repository + ", s.status, s.exit_code, s.signo, s.elapsed, s.event_count, s.lines_lost" + reason +
           ", s.argv";
  }
  return "s.sid, s.start_time, " + owner_columns("s", Units::milliseconds) + ", " + command + ", " + repository +
         ", " + k_status_with_loss +
         " AS status, s.exit_code, s.signo, round(s.elapsed * 1000, 3) AS elapsed_ms, s.event_count" + reason +
         ", s.argv";
}

// "AND ..." for the filters other than the window; no parameters.
std::string filter_condition(const SessionsOptions& options) {
  std::string sql;
  if (!options.status.empty()) {
    // Checked by CLI11 against the three states: safe to inline.
    sql += " AND s.status = '" + options.status + "'";
  }
  if (options.failed) {
    sql += std::string(" AND ") + k_failed_condition;
  }
  return sql;
}

void decorate(ResultSet& result, db::Database& db, const SessionsOptions& options, OutputFormat format) {
  present_failure_reason(result);
  present_session_columns(result, db, format, options.full_sid ? SidForm::whole : SidForm::short_form);
  if (!is_machine_format(format)) {
    drop_column(result, "signo");  // the reason names the signal
  }
}

TableStyle table_style(const Context& ctx, const ResultSet& result) {
  TableStyle style;
  style.limits = {{"argv", k_min_cut_chars}, {"reason", k_min_cut_chars}};
  style.alert = failed_row(result);
  style.colour = ctx.global.colour;
  return style;
}

void run_list(const Context& ctx, const SessionsOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const Window window = to_window(options.window);
  std::string sql = "SELECT " + select_columns(ctx.global.format, options.failed) + " FROM sessions s WHERE 1" +
                    window_condition(window) + filter_condition(options) + k_newest_first;
  const int limit = options.last ? 1 : options.limit.value_or(k_default_session_rows);
  if (limit > 0) {
    sql += " LIMIT " + std::to_string(limit);
  }
  ResultSet result;
  {
    const db::ReadTransaction snapshot(db);
    db::Statement stmt = db.prepare(sql);
    bind_window(stmt, window);
    result = read_all(stmt);
    decorate(result, db, options, ctx.global.format);
  }
  if (options.reverse) {
    // The same rows (the newest N), oldest first, as `git log -n N --reverse`.
    std::reverse(result.rows.begin(), result.rows.end());
  }
  print_result(ctx.out, result, ctx.global.format, table_style(ctx, result));
}

// --follow: prints until interrupted (SIGINT, SIGTERM) or until its output
// is closed.
volatile std::sig_atomic_t g_stop = 0;

extern "C" void request_stop(int /*signal*/) { g_stop = 1; }

// A table whose column widths are fixed by the first rows it prints (and
// at least what typical values need, for a start with no rows) and only
// grow: later rows line up with earlier ones as far as they can.
class StreamingTable {
 public:
  void print(std::ostream& out, const ResultSet& result, const TableStyle& style) {
    if (result.rows.empty() && m_widths.size() > 0) {
      return;
    }
    std::vector<std::vector<std::string>> cells;
    if (m_widths.empty()) {
      m_widths.assign(result.columns.size(), 0);
      m_right.assign(result.columns.size(), false);
      for (std::size_t c = 0; c < result.columns.size(); ++c) {
        const std::string& name = result.columns[c];
        m_widths[c] = std::max(display_width(name), typical_width(name));
        m_right[c] = name == "exit_code" || name == "elapsed_ms" || name == "event_count";
      }
    }
    for (const Row& row : result.rows) {
      auto& line = cells.emplace_back();
      for (std::size_t c = 0; c < row.size(); ++c) {
        line.push_back(table_cell_text(result.columns[c], row[c]));
      }
    }
    // On a terminal the cuttable columns (argv, reason) take what the
    // others leave of its width, as in print_table(); the others only grow.
    std::vector<std::size_t> minimum(m_widths.size());
    for (const ColumnLimit& limit : style.limits) {
      for (std::size_t c = 0; c < result.columns.size(); ++c) {
        minimum[c] = result.columns[c] == limit.column ? limit.min_chars : minimum[c];
      }
    }
    std::vector<std::size_t> wanted = m_widths;
    for (const auto& line : cells) {
      for (std::size_t c = 0; c < line.size(); ++c) {
        wanted[c] = std::max(wanted[c], display_width(line[c]));
      }
    }
    const std::vector<std::size_t> fitted =
        cuts_cells() ? fit_widths(wanted, minimum, *display().terminal_columns) : wanted;
    for (auto& line : cells) {
      for (std::size_t c = 0; c < line.size(); ++c) {
        line[c] = fitted[c] < wanted[c] ? truncate_text(line[c], fitted[c]) : line[c];
        m_widths[c] = std::max(m_widths[c], display_width(line[c]));
      }
    }
    std::string text;
    const auto append_line = [&](const auto& cell, bool red) {
      std::string line;
      for (std::size_t c = 0; c < m_widths.size(); ++c) {
        const std::string value = cell(c);
        line += c > 0 ? "  " : "";
        const std::size_t pad = m_widths[c] - std::min(m_widths[c], display_width(value));
        if (m_right[c]) {
          line.append(pad, ' ');
        }
        line += value;
        if (!m_right[c] && c + 1 < m_widths.size()) {
          line.append(pad, ' ');
        }
      }
      text += red ? std::string(k_red) + line + std::string(k_normal) + "\n" : line + "\n";
    };
    if (!m_header_done) {
      append_line([&](std::size_t c) { return result.columns[c]; }, false);
      append_line([&](std::size_t c) { return std::string(m_widths[c], '-'); }, false);
      m_header_done = true;
    }
    for (std::size_t r = 0; r < cells.size(); ++r) {
      append_line([&](std::size_t c) { return cells[r][c]; }, style.colour && style.alert(result.rows[r]));
    }
    out << text;
  }

 private:
  static std::size_t typical_width(const std::string& column) {
    if (column == "sid") {
      return 19;  // a short SID: up to the tenths of a second
    }
    if (column == "start_time") {
      return 27;  // a local time with milliseconds and a zone's name
    }
    if (column == "owner") {
      return 8;
    }
    return column == "cmd_name" || column == "status" ? 10 : 0;
  }

  std::vector<std::size_t> m_widths;
  std::vector<bool> m_right;
  bool m_header_done = false;
};

class FollowPrinter {
 public:
  explicit FollowPrinter(const Context& ctx) : m_ctx(ctx) {}
  void print(const ResultSet& result) {
    switch (m_ctx.global.format) {
      case OutputFormat::table: m_table.print(m_ctx.out, result, table_style(m_ctx, result)); break;
      case OutputFormat::json: {
        // JSON Lines: an array would never be closed.
        std::string text;
        for (const Row& row : result.rows) {
          append_json_object(text, result.columns, row, result.json_columns);
          text.push_back('\n');
        }
        m_ctx.out << text;
        break;
      }
      case OutputFormat::csv:
      case OutputFormat::tsv:
        print_delimited(m_ctx.out, result, m_ctx.global.format == OutputFormat::csv ? Delimiter::csv : Delimiter::tsv,
                        m_header_done ? Header::omit : Header::print);
        m_header_done = true;
        break;
    }
    m_ctx.out.flush();
  }

 private:
  const Context& m_ctx;
  StreamingTable m_table;
  bool m_header_done = false;
};

// Removes the last column (the session's id, selected for bookkeeping).
std::vector<std::int64_t> take_ids(ResultSet& result) {
  std::vector<std::int64_t> ids;
  for (Row& row : result.rows) {
    ids.push_back(std::get<std::int64_t>(row.back()));
    row.pop_back();
  }
  result.columns.pop_back();
  return ids;
}

void run_follow(const Context& ctx, const SessionsOptions& options) {
  const Window window = to_window(options.window);
  const std::string columns = select_columns(ctx.global.format, options.failed);
  const std::string filters = window_condition(window) + filter_condition(options);
  FollowPrinter printer(ctx);
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);

  // Finished sessions only: a row is printed once, with its outcome. New
  // sessions are those past the highest id seen (trace2d numbers sessions
  // in order); those seen running are asked about again until they end.
  std::int64_t seen_id = 0;
  std::set<std::int64_t> running;
  {
    db::Database db = open_database(ctx.global.db_path, std::chrono::milliseconds::zero());
    const db::ReadTransaction snapshot(db);
    seen_id = db.query_int("SELECT max(id) FROM sessions").value_or(0);
    db::Statement pending = db.prepare("SELECT id FROM sessions WHERE status = 'running'");
    while (pending.step()) {
      running.insert(pending.column_int(0));
    }
    const int limit = options.limit.value_or(k_default_follow_limit);
    db::Statement stmt = db.prepare("SELECT " + columns + ", s.id FROM sessions s WHERE s.status != 'running'" + filters +
                                    k_newest_first +
                                    (limit > 0 ? " LIMIT " + std::to_string(limit) : std::string()));
    bind_window(stmt, window);
    ResultSet result = read_all(stmt);
    std::reverse(result.rows.begin(), result.rows.end());  // oldest first, as new ones follow
    take_ids(result);
    decorate(result, db, options, ctx.global.format);
    printer.print(result);
  }
  while (g_stop == 0 && ctx.out) {
    std::this_thread::sleep_for(k_follow_interval);
    // A fresh connection each time: the query time limit counts from the
    // open, and the daemon may have replaced the file meanwhile.
    db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
    const db::ReadTransaction snapshot(db);
    const std::int64_t max_id = db.query_int("SELECT max(id) FROM sessions").value_or(0);
    std::string pending_ids;
    for (const std::int64_t id : running) {
      pending_ids += (pending_ids.empty() ? "" : ",") + std::to_string(id);
    }
    // Every new or pending session, whether it matches (the filter is a
    // column: a session must leave `running` even when it is not shown;
    // coalesce, since a comparison with NULL, such as a missing exit code,
    // is NULL).
    db::Statement stmt =
        db.prepare("SELECT " + columns + ", s.status = 'running', coalesce((1" + filters + "), 0), s.id FROM sessions s WHERE (s.id > ?4 AND s.id <= ?5)" +
                   (pending_ids.empty() ? std::string() : " OR s.id IN (" + pending_ids + ")") + " ORDER BY s.id");
    bind_window(stmt, window);
    stmt.bind_int(4, seen_id);
    stmt.bind_int(5, max_id);
    ResultSet all = read_all(stmt);
    const std::vector<std::int64_t> ids = take_ids(all);
    ResultSet shown;
    shown.columns = all.columns;
    shown.columns.resize(shown.columns.size() - 2);
    for (std::size_t i = 0; i < all.rows.size(); ++i) {
      Row& row = all.rows[i];
      const bool matches = std::get<std::int64_t>(row.back()) != 0;
      const bool is_running = std::get<std::int64_t>(row[row.size() - 2]) != 0;
      row.resize(row.size() - 2);
      if (is_running) {
        running.insert(ids[i]);
        continue;
      }
      running.erase(ids[i]);
      if (matches) {
        shown.rows.push_back(std::move(row));
      }
    }
    seen_id = std::max(seen_id, max_id);
    decorate(shown, db, options, ctx.global.format);
    if (!shown.rows.empty()) {
      printer.print(shown);
    }
  }
}

}  // namespace

Command add_sessions_command(CLI::App& cli) {
  auto options = std::make_shared<SessionsOptions>();
  CLI::App* app =
      cli.add_subcommand("sessions", "List sessions, newest first by start time (or follow them as they finish)");
  add_window_flags(*app, options->window);
  add_listing_flags(*app, options->window);
  app->add_option("--status", options->status, "Only sessions in this state")
      ->check(CLI::IsMember({"running", "complete", "incomplete"}));
  app->add_flag("--failed", options->failed,
                "Only failed runs: a non-zero exit code, a signal, or never finished (incomplete); with the reason: the "
                "first error message, the signal");
  app->add_flag("--last", options->last, "Only the latest session (after the filters)");
  app->add_option("-n,--limit", options->limit,
                  "Show at most N sessions, the newest (0: all; default 50, with --follow 10)")
      ->check(whole_number_at_least(0));
  app->add_flag("--reverse", options->reverse,
                "Oldest first: the same sessions (the newest N), in the order they started, as `git log --reverse`");
  app->add_flag("-f,--follow", options->follow,
                "Keep running and print each session (matching the filters) when it finishes, as `journalctl -f` "
                "does; JSON comes as one object per line");
  app->add_flag("--full-sid", options->full_sid,
                "Print whole SIDs in the table (by default the shortest unique prefix of each SID's last part, "
                "which `show` and `tree` accept)");
  app->get_option("--follow")->excludes(app->get_option("--last"));
  app->get_option("--follow")->excludes(app->get_option("--reverse"));
  return {app,
          [options](const Context& ctx) {
            options->follow ? run_follow(ctx, *options) : run_list(ctx, *options);
          },
          [options] { return !options->follow; }};
}

}  // namespace trace2d::ctl
