// trace2ctl status: what the daemon writing this database is doing, from
// the counters it publishes every few seconds (daemon_status, source_stats).

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "ctl/commands/command.hpp"
#include "ctl/output/display.hpp"
#include "ctl/output/json.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/daemon_liveness.hpp"
#include "ctl/query/database.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

// Exit statuses (docs/trace2ctl.md, "status"), as `systemctl status` has
// 3 for a unit that is not running.
constexpr int k_exit_not_running = 3;
constexpr int k_exit_export_failing = 4;
// Its process lives but its status is stale: it cannot write the database
// (full, locked) or it is stopped or hung. Not 3: a monitor restarting a
// daemon that is only waiting for room would lose what it holds in memory.
constexpr int k_exit_not_updating = 5;

std::string mib(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

std::string duration(std::int64_t us) {
  const std::int64_t s = us / 1000000;
  char text[48];
  if (s >= 86400) {
    std::snprintf(text, sizeof text, "%lldd%02lldh", static_cast<long long>(s / 86400),
                  static_cast<long long>(s % 86400 / 3600));
  } else if (s >= 3600) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s % 3600 / 60));
  } else {
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  }
  return text;
}

void run_status(const Context& ctx) {
  require_table_or_json(ctx, "status");
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  const bool has_status =
      has_object(db, "daemon_status");
  if (!has_status) {
    throw CommandError("this database predates status reporting; run a newer trace2d on it first");
  }
  db.exec("BEGIN");
  db::Statement daemon_stmt = db.prepare("SELECT * FROM daemon_status WHERE id = 1");
  ResultSet daemon = read_all(daemon_stmt);
  db::Statement sources_stmt = db.prepare(
      "SELECT source, address, channels_opened AS opened, channels_open AS open, bytes, lines, events,"
      " rejects, dropped_lines AS dropped, kernel_drops, too_many_files FROM source_stats ORDER BY source");
  const ResultSet sources = read_all(sources_stmt);
  db::Statement totals_stmt = db.prepare(
      "SELECT count(*) AS sessions, coalesce(sum(event_count), 0) AS events,"
      " (SELECT count(*) FROM rejects) AS rejects FROM sessions");
  const ResultSet totals = read_all(totals_stmt);
  // The OTLP exporter's figures (schema v9; absent from older databases).
  ResultSet otlp;
  ResultSet otlp_dropped;
  if (has_object(db, "otlp_export")) {
    const auto has_column = [&db](const char* name) {
      return db.query_int("SELECT count(*) FROM pragma_table_info('otlp_export') WHERE name = '" + std::string(name) +
                          "'")
                 .value_or(0) > 0;
    };
    // withheld_sessions since schema v10, paused_since since v19.
    const bool withheld = has_column("withheld_sessions");
    const bool paused = has_column("paused_since");
    // What waits to be sent: the finished sessions queued (running ones
    // cannot be sent yet, and are counted apart).
    db::Statement otlp_stmt = db.prepare(
        "SELECT enabled, endpoint,"
        " (SELECT count(*) FROM otlp_pending p JOIN sessions s ON s.id = p.session_id"
        "   WHERE s.status != 'running') AS backlog_sessions, exported_sessions,"
        " exported_spans, rejected_spans, dropped_sessions, failures, last_success, last_failure,"
        " last_failure_reason, " + std::string(withheld ? "withheld_sessions" : "0 AS withheld_sessions") + ", " +
        std::string(paused ? "paused_since" : "NULL AS paused_since") +
        ", (SELECT count(*) FROM otlp_pending p JOIN sessions s ON s.id = p.session_id"
        "   WHERE s.status = 'running') AS queued_running"
        " FROM otlp_export WHERE id = 1");
    otlp = read_all(otlp_stmt);
    // Sessions dropped unsent, by reason (schema v19).
    if (has_object(db, "otlp_dropped")) {
      db::Statement dropped_stmt = db.prepare("SELECT reason, sessions FROM otlp_dropped ORDER BY reason");
      otlp_dropped = read_all(dropped_stmt);
    }
  }
  // What the storage rule kept out of the database (schema v11), per rule;
  // per uid in the table itself.
  ResultSet withheld;
  if (has_object(db, "withheld_stats")) {
    db::Statement withheld_stmt = db.prepare(
        "SELECT rule, sum(sessions) AS sessions, sum(events) AS events FROM withheld_stats"
        " GROUP BY rule ORDER BY rule");
    withheld = read_all(withheld_stmt);
  }
  db.exec("COMMIT");
  if (daemon.rows.empty()) {
    throw CommandExit(k_exit_not_running,
                      "trace2d has not reported any status into '" + ctx.global.db_path + "' yet");
  }

  const Row& d = daemon.rows.front();
  const auto column = [&](const std::string& name) -> const Value& {
    for (std::size_t i = 0; i < daemon.columns.size(); ++i) {
      if (daemon.columns[i] == name) {
        return d[i];
      }
    }
    throw CommandError("daemon_status lacks column " + name);
  };
  const auto number = [&](const std::string& name) {
    const Value& v = column(name);
    return std::holds_alternative<std::int64_t>(v) ? std::get<std::int64_t>(v) : 0;
  };
  const auto text = [&](const std::string& name) {
    const Value& v = column(name);
    return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : std::string();
  };
  const std::int64_t now = proto::unix_now_us();
  const std::int64_t updated = proto::parse_utc_timestamp(text("updated_at")).value_or(0);
  const std::int64_t started = proto::parse_utc_timestamp(text("started_at")).value_or(0);
  const auto pid = static_cast<pid_t>(number("pid"));
  const Liveness state = liveness(pid, updated, now);
  const bool alive = state != Liveness::not_running;
  const bool running = state == Liveness::running;
  // The OTLP export is failing when its latest attempt failed (the last
  // failure is later than the last success, or nothing ever succeeded):
  // paused (refused or unreachable: the queue is kept and retried), or its
  // latest request rejected (its sessions dropped).
  bool export_failing = false;
  bool export_paused = false;
  if (!otlp.rows.empty()) {
    const Row& o = otlp.rows.front();
    const auto* enabled = std::get_if<std::int64_t>(&o[0]);
    const auto* last_success = std::get_if<std::string>(&o[8]);
    const auto* last_failure = std::get_if<std::string>(&o[9]);
    export_failing = enabled != nullptr && *enabled != 0 && last_failure != nullptr &&
                     (last_success == nullptr || *last_failure > *last_success);
    export_paused = enabled != nullptr && *enabled != 0 && std::holds_alternative<std::string>(o[12]);
  }
  const int exit_status = !alive           ? k_exit_not_running
                          : !running       ? k_exit_not_updating
                          : export_failing ? k_exit_export_failing
                                           : 0;

  if (ctx.global.format == OutputFormat::json) {
    std::string out = "{\"running\":";
    out += running ? "true" : "false";
    out += ",\"daemon\":";
    append_json_object(out, daemon.columns, d);
    out += ",\"sources\":";
    append_json_array(out, sources);
    out += ",\"totals\":";
    append_json_object(out, totals.columns, totals.rows.front());
    if (!otlp.rows.empty()) {
      out += ",\"otlp\":";
      append_json_object(out, otlp.columns, otlp.rows.front());
      out += ",\"otlp_dropped\":";
      append_json_array(out, otlp_dropped);
    }
    out += ",\"withheld\":";
    append_json_array(out, withheld);
    out += ",\"export_failing\":";
    out += export_failing ? "true" : "false";
    out += ",\"export_paused\":";
    out += export_paused ? "true" : "false";
    out += "}\n";
    ctx.out << out;
    if (exit_status != 0) {
      throw CommandExit(exit_status, "");
    }
    return;
  }
  ctx.out << "trace2d " << text("version") << ": "
          << (running ? "running"
              : alive ? "not updating its status: its process lives, but it cannot write this database (full? "
                        "locked? see its log) or it is stopped"
                      : "not running")
          << " (pid " << pid << "), started " << display_time(text("started_at"))
          << (running ? ", up " + duration(now - started) : "") << ", last update " << duration(now - updated)
          << " ago\n";
  ctx.out << "queue: " << mib(number("queue_bytes")) << " now, " << mib(number("queue_peak_bytes"))
          << " at most, bound " << mib(number("queue_limit_bytes")) << "\n";
  // Absent from databases last written by a trace2d older than the columns.
  if (std::find(daemon.columns.begin(), daemon.columns.end(), "live_bytes") != daemon.columns.end()) {
    ctx.out << "sessions in memory: " << mib(number("live_bytes")) << "; " << number("values_cut")
            << " values cut or not kept there since start (over a per-value or per-uid bound; the events keep them"
               " whole: see problems)\n";
  }
  ctx.out << "committed: " << number("events_committed") << " events since start, " << number("failed_commits")
          << " failed or busy commits";
  const Value& p50 = column("commit_latency_p50_ms");
  if (std::holds_alternative<double>(p50)) {
    ctx.out << "; read-to-commit latency p50 " << cell_text(p50) << " ms, p99 "
            << cell_text(column("commit_latency_p99_ms")) << " ms, max " << cell_text(column("commit_latency_max_ms"))
            << " ms";
  }
  ctx.out << "\n";
  // Absent from databases last written by a trace2d older than the column.
  const bool knows_recreation =
      std::find(daemon.columns.begin(), daemon.columns.end(), "database_recreated") != daemon.columns.end();
  if (knows_recreation && number("database_recreated") > 0) {
    ctx.out << "database recreated " << number("database_recreated")
            << " times since start: its file was removed or replaced while trace2d ran (see its log)\n";
  }
  const Row& t = totals.rows.front();
  // Absent from databases last written by a trace2d older than the columns (schema v23).
  const bool knows_retention =
      std::find(daemon.columns.begin(), daemon.columns.end(), "db_used_bytes") != daemon.columns.end();
  ctx.out << "database: " << mib(number("db_bytes"));
  if (knows_retention && number("db_used_bytes") > 0) {  // NULL (a status written before it was read): none
    // What retention's size bound bounds: the file shrinks to it only as
    // free pages are given back.
    ctx.out << " (" << mib(number("db_used_bytes")) << " of pages in use)";
  }
  ctx.out << " + " << mib(number("wal_bytes")) << " WAL; " << cell_text(t[0]) << " sessions, " << cell_text(t[1])
          << " events, " << cell_text(t[2]) << " rejected lines\n";
  if (knows_retention && (number("retention_sessions_deleted") > 0 || number("retention_rejects_deleted") > 0)) {
    ctx.out << "retention: " << number("retention_sessions_deleted") << " sessions ("
            << number("retention_events_deleted") << " events) and " << number("retention_rejects_deleted")
            << " rejected lines deleted since start, older than retention.max_age or over retention.max_db_bytes\n";
  }
  if (!withheld.rows.empty()) {
    ctx.out << "withheld by the storage rule:";
    const char* separator = " ";
    for (const Row& w : withheld.rows) {
      ctx.out << separator << cell_text(w[0]) << " " << cell_text(w[1]) << " sessions (" << cell_text(w[2])
              << " events)";
      separator = ", ";
    }
    ctx.out << "\n";
  }
  if (!otlp.rows.empty() && std::get_if<std::int64_t>(&otlp.rows.front()[0]) != nullptr &&
      std::get<std::int64_t>(otlp.rows.front()[0]) != 0) {
    const Row& o = otlp.rows.front();
    ctx.out << "otlp export to " << cell_text(o[1]) << ": " << cell_text(o[2]) << " sessions waiting (and "
            << cell_text(o[13]) << " still running), " << cell_text(o[3]) << " sessions (" << cell_text(o[4])
            << " spans) exported, " << cell_text(o[5]) << " spans rejected by the collector, " << cell_text(o[6])
            << " sessions dropped";
    if (!otlp_dropped.rows.empty()) {
      const char* separator = " (";
      for (const Row& reason : otlp_dropped.rows) {
        ctx.out << separator << cell_text(reason[0]) << " " << cell_text(reason[1]);
        separator = ", ";
      }
      ctx.out << ")";
    }
    ctx.out << ", " << cell_text(o[11]) << " withheld by detail rules, " << cell_text(o[7])
            << " failed attempts; last success "
            << (std::holds_alternative<Null>(o[8]) ? "never" : table_cell_text("started_at", o[8]));
    if (!std::holds_alternative<Null>(o[9])) {
      ctx.out << ", last failure " << table_cell_text("started_at", o[9]);
      if (!export_paused) {
        ctx.out << " (" << cell_text(o[10]) << ")";  // else on the PAUSED line
      }
    }
    if (export_paused) {
      ctx.out << "\n  PAUSED since " << table_cell_text("started_at", o[12])
              << ": nothing is dropped; the queue waits and the export is retried with backoff. Why: "
              << cell_text(o[10]);
    } else if (export_failing) {
      ctx.out << "; FAILING: its latest attempt failed";
    }
    ctx.out << "\n";
  }
  ctx.out << "\n";
  print_table(ctx.out, sources);
  if (exit_status != 0) {
    throw CommandExit(exit_status, "");
  }
}

}  // namespace

Command add_status_command(CLI::App& cli) {
  CLI::App* app = cli.add_subcommand(
      "status", "What the daemon writing this database is doing: per source counters, queue, latency, size");
  return {app, [](const Context& ctx) { run_status(ctx); }, [] { return true; }};
}

}  // namespace trace2d::ctl
