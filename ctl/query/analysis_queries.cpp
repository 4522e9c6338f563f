#include "ctl/query/analysis_queries.hpp"

#include <vector>

#include "ctl/query/failed.hpp"
#include "ctl/query/owner.hpp"
#include "model/command_identity.hpp"

namespace trace2d::ctl {
namespace {

// A value typed by the user as an SQL string literal (the list of --cmd
// values has no fixed number of parameters).
std::string literal(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    out += c;
    if (c == '\'') {
      out += '\'';
    }
  }
  return out + "'";
}

std::string literal_list(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& value : values) {
    out += (out.empty() ? "" : ", ") + literal(value);
  }
  return out;
}

std::string repo_condition(const Window& window) {
  const std::string worktree = model::worktree_sql("s");
  const std::string given = literal(window.repo);
  std::string sql = " AND (" + model::nickname_sql("s") + " = " + given + " OR " + worktree + " = " + given;
  if (!window.repo_path.empty() && window.repo_path != window.repo) {
    sql += " OR " + worktree + " = " + literal(window.repo_path);
  }
  // The last components of the worktree, as the table shortens it.
  sql += " OR substr(" + worktree + ", -length(" + given + ") - 1) = '/' || " + given + ")";
  return sql;
}

}  // namespace

std::string window_condition(const Window& window) {
  std::string sql;
  if (window.since) {
    sql += " AND (s.start_time >= ?1 OR (s.start_time IS NULL AND s.first_received >= ?1))";
  }
  if (!window.cmds.empty()) {
    const std::string names = literal_list(window.cmds);
    sql += " AND (s.cmd_name IN (" + names + ") OR " + model::display_name_sql("s") + " IN (" + names + "))";
  }
  if (window.until) {
    sql += " AND coalesce(s.start_time, s.first_received) < ?3";
  }
  if (window.top_level) {
    sql += " AND " + model::top_level_condition("s");
  }
  if (!window.repo.empty()) {
    sql += repo_condition(window);
  }
  return sql;
}

void bind_window(db::Statement& stmt, const Window& window) {
  if (window.since) {
    stmt.bind_text(1, *window.since);
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

struct KeyColumn {
  std::string name;
  std::string expr;  // on the sessions alias `s`
};

KeyColumn key_column(GroupKey key) {
  switch (key) {
    case GroupKey::cmd: return {"command", model::display_name_sql("s")};
    case GroupKey::repo: return {"repository", "coalesce(" + model::nickname_sql("s") + ", " + model::worktree_sql("s") + ")"};
    case GroupKey::version: return {"version", "s.exe"};
    case GroupKey::uid: return {"owner", "CASE WHEN s.source = 'import' THEN NULL ELSE s.peer_uid END"};
    case GroupKey::nickname: return {"nickname", model::nickname_sql("s")};
  }
  return {"command", model::display_name_sql("s")};
}

struct KeySql {
  std::string select;  // "expr AS name, ..." on `s`
  std::string names;   // "name, ..."
  std::string joined;  // "p.name IS w.name AND ..."
  std::string of_w;    // "w.name, ..."
};

KeySql key_sql(const std::vector<GroupKey>& keys) {
  KeySql sql;
  for (const GroupKey key : keys) {
    const KeyColumn column = key_column(key);
    const bool first = sql.names.empty();
    sql.select += (first ? "" : ", ") + column.expr + " AS " + column.name;
    sql.names += (first ? "" : ", ") + column.name;
    sql.joined += (first ? "" : " AND ") + std::string("p.") + column.name + " IS w." + column.name;
    sql.of_w += (first ? "" : ", ") + std::string("w.") + column.name;
  }
  return sql;
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

ResultSet grouped_stats(db::Database& db, const Window& window, const std::vector<GroupKey>& keys, Units units) {
  const KeySql k = key_sql(keys);
  const std::string sql = "WITH w AS (SELECT " + k.select + ", s.elapsed, " + std::string(k_failure_count_condition) +
                          " AS failed, s.status FROM sessions s"
                          " WHERE (s.cmd_name IS NOT NULL OR " +
                          model::display_name_sql("s") + " IS NOT NULL)" + window_condition(window) + "), " +
                          percentiles_cte(k.names, "w") + " SELECT " + k.of_w +
                          ", count(*) AS runs, coalesce(sum(w.failed), 0) AS failures,"
                          " sum(w.status = 'incomplete') AS incomplete, " +
                          duration("p.p50", "p50_elapsed", units) + ", " + duration("p.p90", "p90_elapsed", units) +
                          ", " + duration("p.p99", "p99_elapsed", units) + ", " +
                          duration("p.max", "max_elapsed", units) + ", " +
                          duration("sum(w.elapsed)", "total_elapsed", units) + " FROM w LEFT JOIN pct p ON " +
                          k.joined + " GROUP BY " + k.of_w + " ORDER BY runs DESC, " + k.of_w;
  return run(db, sql, window);
}

ResultSet slowest_per_group(db::Database& db, const Window& window, const std::vector<GroupKey>& keys, int limit,
                            Units units) {
  const KeySql k = key_sql(keys);
  std::string of_g;
  for (const GroupKey key : keys) {
    of_g += (of_g.empty() ? "g." : ", g.") + key_column(key).name;
  }
  // Grouped on narrow rows (keys, id, elapsed), the details read for the
  // few groups shown: carrying argv and the rest through the sort of every
  // run made `top` over 50 M events 5x slower. With exactly one max(),
  // SQLite takes `id` from the row that holds it.
  const std::string sql =
      "WITH w AS (SELECT " + k.select + ", s.id, s.elapsed FROM sessions s WHERE s.elapsed IS NOT NULL" +
      window_condition(window) + "), g AS (SELECT " + k.names +
      ", max(elapsed) AS elapsed, count(*) AS runs, id FROM w GROUP BY " + k.names +
      " ORDER BY elapsed DESC, id LIMIT " + std::to_string(limit) + ") SELECT " + of_g + ", " +
      duration("g.elapsed", "elapsed", units) +
      ", g.runs, s.exit_code, s.status, s.start_time, s.sid, s.argv FROM g JOIN sessions s ON s.id = g.id"
      " ORDER BY g.elapsed DESC, g.id";
  return run(db, sql, window);
}

// A region's names are ids into `names`, or (when their sender had used up
// its share of that table) text of their own: grouped by both, shown as one.
ResultSet region_stats(db::Database& db, const Window& window, Units units) {
  const std::string source =
      window.since || window.until || !window.cmds.empty() || window.top_level || !window.repo.empty()
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
  const std::string sql = "SELECT " + duration("s.elapsed", "elapsed", units) + ", " +
                          model::display_name_sql("s") + " AS command" + (units == Units::seconds ? ", s.cmd_name" : "") +
                          ", s.exit_code, s.status, s.start_time, " + owner_columns("s", units) +
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
      "SELECT s.start_time, " + model::display_name_sql("s") +
      " AS command, s.exit_code, s.signo, s.status, round(s.elapsed * 1000, 3) AS elapsed_ms, " +
      model::first_error_sql("s") + " AS first_error, s.argv, s.sid FROM sessions s WHERE " + std::string(k_failed_condition) + window_condition(window) +
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
