#include "ctl/query/analysis_queries.hpp"

#include <vector>

#include "ctl/query/failed.hpp"
#include "ctl/query/owner.hpp"

namespace trace2d::ctl {
std::string window_condition(const Window& window) {
  std::string sql;
  if (window.since) {
    sql += " AND (s.start_time >= ?1 OR (s.start_time IS NULL AND s.first_received >= ?1))";
  }
  if (!window.cmd.empty()) {
    sql += " AND s.cmd_name = ?2";
  }
  if (window.until) {
    sql += " AND coalesce(s.start_time, s.first_received) < ?3";
  }
  return sql;
}

void bind_window(db::Statement& stmt, const Window& window) {
  if (window.since) {
    stmt.bind_text(1, *window.since);
  }
  if (!window.cmd.empty()) {
    stmt.bind_text(2, window.cmd);
  }
  if (window.until) {
    stmt.bind_text(3, *window.until);
  }
}

namespace {

ResultSet run(db::Database& db, const std::string& sql, const Window& window) {
  db::Statement stmt = db.prepare(sql);
  bind_window(stmt, window);
  return read_all(stmt);
}

// A duration column: seconds under the view's name, or milliseconds.
std::string duration(const std::string& expr, const std::string& name, Units units) {
  if (units == Units::seconds) {
    return expr + " AS " + name;
  }
  return "round(" + expr + " * 1000, 3) AS " + name + "_ms";
}

// Nearest-rank percentiles of `value` per `keys`, over the rows of `source`
// (a CTE name), as in the schema's statistics views.
std::string percentiles_cte(const std::string& keys, const std::string& source) {
  return "timed AS (SELECT " + keys + ", elapsed, row_number() OVER (PARTITION BY " + keys +
         " ORDER BY elapsed) AS rank, count(*) OVER (PARTITION BY " + keys + ") AS n FROM " + source +
         " WHERE elapsed IS NOT NULL),"
         " pct AS (SELECT " + keys + ","
         " max(CASE WHEN rank = (n * 50 + 99) / 100 THEN elapsed END) AS p50,"
         " max(CASE WHEN rank = (n * 90 + 99) / 100 THEN elapsed END) AS p90,"
         " max(CASE WHEN rank = (n * 99 + 99) / 100 THEN elapsed END) AS p99,"
         " max(elapsed) AS max, sum(elapsed) AS total, count(*) AS closed FROM timed GROUP BY " + keys + ")";
}

}  // namespace

ResultSet command_stats(db::Database& db, const Window& window, Units units) {
  const std::string sql =
      "WITH w AS (SELECT s.cmd_name, s.elapsed, s.exit_code, s.signo, s.status FROM sessions s"
      " WHERE s.cmd_name IS NOT NULL" + window_condition(window) + "), " +
      percentiles_cte("cmd_name", "w") +
      " SELECT w.cmd_name, count(*) AS runs, coalesce(sum(w.exit_code != 0 OR w.signo IS NOT NULL), 0) AS failures,"
      " sum(w.status = 'incomplete') AS incomplete, " +
      duration("p.p50", "p50_elapsed", units) + ", " + duration("p.p90", "p90_elapsed", units) + ", " +
      duration("p.p99", "p99_elapsed", units) + ", " + duration("p.max", "max_elapsed", units) + ", " +
      duration("sum(w.elapsed)", "total_elapsed", units) +
      " FROM w LEFT JOIN pct p ON p.cmd_name = w.cmd_name GROUP BY w.cmd_name ORDER BY runs DESC, w.cmd_name";
  return run(db, sql, window);
}

// A region's names are ids into `names`, or (when their sender had used up
// its share of that table) text of their own: grouped by both, shown as one.
ResultSet region_stats(db::Database& db, const Window& window, Units units) {
  const std::string source =
      window.since || window.until || !window.cmd.empty()
          ? "(SELECT r.category, r.label, r.category_text, r.label_text, r.elapsed FROM region_store r"
            " JOIN sessions s ON s.id = r.session WHERE 1" + window_condition(window) + ")"
          : std::string("region_store");
  const std::string sql =
      "WITH " + percentiles_cte("category, label, category_text, label_text", source) +
      " SELECT coalesce(ca.text, p.category_text) AS category, coalesce(la.text, p.label_text) AS label,"
      " p.closed AS count, " +
      duration("p.p50", "p50_elapsed", units) + ", " + duration("p.p90", "p90_elapsed", units) + ", " +
      duration("p.p99", "p99_elapsed", units) + ", " + duration("p.max", "max_elapsed", units) + ", " +
      duration("p.total", "total_elapsed", units) +
      " FROM pct p LEFT JOIN names ca ON ca.id = p.category LEFT JOIN names la ON la.id = p.label"
      " ORDER BY p.total DESC, 1, 2";
  return run(db, sql, window);
}

ResultSet slowest_sessions(db::Database& db, const Window& window, int limit, Units units) {
  const std::string sql = "SELECT " + duration("s.elapsed", "elapsed", units) +
                          ", s.cmd_name, s.exit_code, s.status, s.start_time, " + owner_columns("s", units) +
                          ", s.depth, s.sid, s.argv"
                          " FROM sessions s WHERE s.elapsed IS NOT NULL" + window_condition(window) +
                          " ORDER BY s.elapsed DESC, s.id LIMIT " + std::to_string(limit);
  return run(db, sql, window);
}

ResultSet slowest_regions(db::Database& db, const Window& window, int limit, Units units) {
  // Sort the compact rows first; names are looked up for the few kept.
  const std::string sql =
      "WITH top AS (SELECT r.session, r.seq, r.thread, r.category, r.label, r.thread_text, r.category_text,"
      " r.label_text, r.msg, r.t_start, r.elapsed"
      " FROM region_store r JOIN sessions s ON s.id = r.session WHERE r.elapsed IS NOT NULL" +
      window_condition(window) + " ORDER BY r.elapsed DESC, r.session, r.seq LIMIT " + std::to_string(limit) +
      ") SELECT " + duration("t.elapsed", "elapsed", units) +
      ", coalesce(ca.text, t.category_text) AS category, coalesce(la.text, t.label_text) AS label, t.msg,"
      " coalesce(th.text, t.thread_text) AS thread, " + duration("t.t_start", "t_start", units) +
      ", s.cmd_name, s.start_time, " + owner_columns("s", units) + ", s.sid"
      " FROM top t JOIN sessions s ON s.id = t.session LEFT JOIN names ca ON ca.id = t.category"
      " LEFT JOIN names la ON la.id = t.label LEFT JOIN names th ON th.id = t.thread"
      " ORDER BY t.elapsed DESC, t.session, t.seq";
  return run(db, sql, window);
}

ResultSet failed_sessions(db::Database& db, const Window& window, int limit) {
  const std::string sql =
      "SELECT s.start_time, s.cmd_name, s.exit_code, s.signo, s.status, round(s.elapsed * 1000, 3) AS elapsed_ms,"
      " s.argv, s.sid FROM sessions s WHERE " + std::string(k_failed_condition) + window_condition(window) +
      " ORDER BY s.first_received DESC, s.id DESC LIMIT " + std::to_string(limit);
  return run(db, sql, window);
}

std::vector<std::string> slowest_roots(db::Database& db, const Window& window, int limit) {
  const std::string sql =
      "SELECT s.sid FROM sessions s WHERE s.elapsed IS NOT NULL"
      " AND (s.parent_sid IS NULL OR s.tree_sid = s.sid OR NOT EXISTS"
      " (SELECT 1 FROM sessions p WHERE p.sid = s.parent_sid AND p.peer_uid IS s.peer_uid))" +
      window_condition(window) + " ORDER BY s.elapsed DESC, s.id LIMIT " + std::to_string(limit);
  db::Statement stmt = db.prepare(sql);
  bind_window(stmt, window);
  std::vector<std::string> sids;
  while (stmt.step()) {
    sids.emplace_back(stmt.column_text(0));
  }
  return sids;
}

}  // namespace trace2d::ctl
