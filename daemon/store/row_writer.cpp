#include "daemon/store/row_writer.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <utility>

#include "proto/sid.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::store {
namespace {

// `head` followed by `rows` groups of `columns` placeholders: one statement
// inserts many rows, which SQLite runs much faster than as many statements.
std::string multi_row_sql(std::string_view head, int columns, std::size_t rows, std::string_view tail = {}) {
  std::string group = "(?";
  for (int c = 1; c < columns; ++c) {
    group += ",?";
  }
  group += ')';
  std::string sql(head);
  sql += " VALUES ";
  for (std::size_t i = 0; i < rows; ++i) {
    if (i > 0) {
      sql += ',';
    }
    sql += group;
  }
  sql += tail;
  return sql;
}

std::string insert_events_sql() {
  return "INSERT INTO event_store (session, seq, type, thread, time_us, file, line, body, raw, " +
         db::leading_column_list("") + ")";
}
// A region flushed while still open is written again when it closes.
constexpr std::string_view k_write_regions =
    "INSERT OR REPLACE INTO region_store (session, seq, thread, nesting, category, label, msg,"
    " repo, t_start, elapsed, parent_seq, leave_seq, thread_text, category_text, label_text)";

// The three session statements share their parameter numbers, so that one
// function binds them all: ?1..?21 the columns a later snapshot can change,
// ?22 and ?23 the indexed ones (start_time, sid_pid), ?24 the id, ?25..?32
// what only the first write sets, ?33 the bytes of the batch's rows of the
// session (its events, regions and children: added to stored_bytes in the
// same write of the row), ?34 what the row itself takes (row_bytes, which
// stored_bytes holds too: the difference from what it took is added), ?35
// its lines lost, ?36 its tree_sid (the insert's only).
constexpr int k_session_update_parameters = 24;
constexpr int k_session_parameters = 32;
constexpr int k_session_bytes_parameter = 33;
constexpr int k_row_bytes_parameter = 34;
constexpr int k_session_lines_lost_parameter = 35;
constexpr int k_session_tree_parameter = 36;  // the insert's only
constexpr std::string_view k_update_session_head =
    "UPDATE sessions SET evt = ?1, exe = ?2, argv = ?3, cmd_name = ?4, hierarchy = ?5, cmd_mode = ?6,"
    " worktree = ?7, cmd_path = ?8, end_time = ?9, elapsed = ?10, exit_code = ?11, signo = ?12,"
    " status = ?13, event_count = ?14, error_count = ?15, problem_count = ?16, last_received = ?17,"
    " time_base_us = ?18, argv_key = ?19, process_start_us = ?20, nickname = ?21,"
    " stored_bytes = stored_bytes + ?33 + ?34 - row_bytes,"
    " row_bytes = trace2d_charge_row(peer_uid, row_bytes, ?34), lines_lost = ?35";

// Registered before the statements that call it are prepared.
db::Database& with_charge_function(db::Database& db, void* writer,
                                   void (*function)(sqlite3_context*, int, sqlite3_value**)) {
  const int rc = sqlite3_create_function_v2(db.handle(), "trace2d_charge_row", 3, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                            writer, function, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    db.fail(rc, "registering trace2d_charge_row");
  }
  return db;
}

void bind_time(db::Statement& stmt, int index, const std::optional<std::int64_t>& unix_us) {
  if (unix_us && *unix_us >= 0 && *unix_us <= proto::k_max_timestamp_us) {
    stmt.bind_text(index, proto::format_utc_timestamp(*unix_us));
  } else {
    stmt.bind_null(index);
  }
}

}  // namespace

RowWriter::RowWriter(db::Database& db)
    : m_db(with_charge_function(db, this, &RowWriter::charge_row)),
      m_insert_name(db.prepare("INSERT OR IGNORE INTO names (id, text) VALUES (?, ?)")),
      m_insert_event(db.prepare(multi_row_sql(insert_events_sql(), k_event_columns, 1))),
      m_insert_events_multi(db.prepare(multi_row_sql(insert_events_sql(), k_event_columns, k_rows_per_insert))),
      m_insert_problem(db.prepare("INSERT OR REPLACE INTO problem_store (session, seq, message) VALUES (?, ?, ?)")),
      m_insert_reject(db.prepare("INSERT INTO rejects (received_at, source, peer_pid, peer_uid, reason, raw, size)"
                                 " VALUES (?, ?, ?, ?, ?, ?, ?)")),
      m_upsert_offset(
          db.prepare("INSERT INTO file_offsets (key, path, offset, finished, updated_at) VALUES (?, ?, ?, ?, ?)"
                     " ON CONFLICT (key) DO UPDATE SET path = excluded.path, offset = excluded.offset,"
                     " finished = excluded.finished, updated_at = excluded.updated_at")),
      m_forget_offset(db.prepare("DELETE FROM file_offsets WHERE key = ?")),
      m_upsert_session(db.prepare(
          "INSERT INTO sessions (evt, exe, argv, cmd_name, hierarchy, cmd_mode, worktree, cmd_path,"
          " end_time, elapsed, exit_code, signo, status, event_count, error_count, problem_count,"
          " last_received, time_base_us, argv_key, process_start_us, nickname, start_time, sid_pid, id,"
          " sid, parent_sid, root_sid, depth, source, peer_pid, peer_uid, first_received, stored_bytes, row_bytes,"
          " lines_lost, tree_sid)"
          " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,"
          "?24,?25,?26,?27,?28,?29,?30,?31,?32,?33 + ?34,?34,?35,?36)"
          " ON CONFLICT (sid) DO UPDATE SET evt = ?1, exe = ?2, argv = ?3, cmd_name = ?4, hierarchy = ?5,"
          " cmd_mode = ?6, worktree = ?7, cmd_path = ?8, end_time = ?9, elapsed = ?10, exit_code = ?11,"
          " signo = ?12, status = ?13, event_count = ?14, error_count = ?15, problem_count = ?16,"
          " last_received = ?17, time_base_us = ?18, argv_key = ?19, process_start_us = ?20,"
          " nickname = ?21, start_time = ?22, sid_pid = ?23, stored_bytes = stored_bytes + ?33 + ?34 - row_bytes,"
          // Inserted, the row is charged whole (write_session); found, it
          // is charged the difference: what it took is taken back here.
          " row_bytes = trace2d_charge_row(peer_uid, row_bytes, 0) + ?34, lines_lost = ?35")),
      // The columns a later snapshot of a session can change; the indexed
      // ones (start_time, sid_pid) only when they did.
      m_update_session(db.prepare(std::string(k_update_session_head) + " WHERE id = ?24")),
      m_update_session_indexed(
          db.prepare(std::string(k_update_session_head) + ", start_time = ?22, sid_pid = ?23 WHERE id = ?24")),
      m_write_region(db.prepare(multi_row_sql(k_write_regions, k_region_columns, 1))),
      m_write_regions_multi(db.prepare(multi_row_sql(k_write_regions, k_region_columns, k_rows_per_insert))),
      // A child's events come apart (start, ready, exit): each fills what it knows.
      m_merge_child(
          db.prepare("INSERT INTO child_store (session, child_id, start_seq, child_class, hook_name, argv, argv_key,"
                     " use_shell, cd, start_us, t_start, pid, code, ready, elapsed, end_us, end_seq)"
                     " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
                     " ON CONFLICT (session, child_id) DO UPDATE SET"
                     " start_seq = coalesce(excluded.start_seq, start_seq),"
                     " child_class = coalesce(excluded.child_class, child_class),"
                     " hook_name = coalesce(excluded.hook_name, hook_name), argv = coalesce(excluded.argv, argv),"
                     " argv_key = coalesce(excluded.argv_key, argv_key),"
                     " use_shell = coalesce(excluded.use_shell, use_shell), cd = coalesce(excluded.cd, cd),"
                     " start_us = coalesce(excluded.start_us, start_us), t_start = coalesce(excluded.t_start, t_start),"
                     " pid = coalesce(excluded.pid, pid), code = coalesce(excluded.code, code),"
                     " ready = coalesce(excluded.ready, ready), elapsed = coalesce(excluded.elapsed, elapsed),"
                     " end_us = coalesce(excluded.end_us, end_us), end_seq = coalesce(excluded.end_seq, end_seq)")),
      m_uid_stats(db.prepare("INSERT OR REPLACE INTO uid_stats (uid, lines, dropped, updated_at) VALUES (?, ?, ?, ?)")),
      m_add_stored_bytes(db.prepare("UPDATE sessions SET stored_bytes = stored_bytes + ?2 WHERE id = ?1")),
      m_eraser(db),
      m_stored_bytes_of(db.prepare("SELECT peer_uid, stored_bytes FROM sessions WHERE id = ?1")),
      m_unqueue_session(db.prepare("DELETE FROM otlp_pending WHERE session_id = ?")),
      m_count_withheld(
          db.prepare("INSERT INTO withheld_stats (uid, rule, sessions, events, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)"
                     " ON CONFLICT (uid, rule) DO UPDATE SET sessions = sessions + excluded.sessions,"
                     " events = events + excluded.events, updated_at = excluded.updated_at")) {}

void RowWriter::write(const WriteBatch& batch) {
  // Before this batch adds to it: what earlier batches stored of a session
  // the storage rule now erases (this batch's own rows of it are left out
  // of the totals by Retention::add_committed).
  for (const stitch::WithheldRecord& withheld : batch.withheld) {
    if (withheld.first) {
      m_stored_bytes_of.bind_int(1, withheld.session);
      if (m_stored_bytes_of.step()) {
        m_erased.push_back(Erased{m_stored_bytes_of.column_optional_int(0), m_stored_bytes_of.column_int(1)});
      }
      m_stored_bytes_of.reset();
    }
  }
  for (const NameRow& name : batch.names) {
    m_insert_name.bind_int(1, name.id);
    m_insert_name.bind_text(2, batch.text(name.text));
    m_insert_name.run();
  }
  // What each sender holds, for retention's size bound: the bytes of the
  // batch's events per session, added as its row is written.
  m_session_bytes.clear();
  const auto add_bytes = [this](std::int64_t session, std::uint64_t row_bytes) {
    const auto bytes = static_cast<std::int64_t>(row_bytes);
    if (m_session_bytes.empty() || m_session_bytes.back().first != session) {
      m_session_bytes.emplace_back(session, bytes);
    } else {
      m_session_bytes.back().second += bytes;
    }
  };
  for (const EventRow& row : batch.events) {
    add_bytes(row.session, stored_bytes(row));
  }
  for (const RegionRow& row : batch.regions) {
    add_bytes(row.session, region_row_bytes(row));
  }
  for (const stitch::ChildRecord& child : batch.children) {
    add_bytes(child.session, child_row_bytes(child));
  }
  // Events come in runs of one session (a batch mostly holds few, long
  // runs): one total per session.
  std::sort(m_session_bytes.begin(), m_session_bytes.end());
  std::size_t merged = 0;
  for (std::size_t i = 0; i < m_session_bytes.size(); ++i) {
    if (merged > 0 && m_session_bytes[merged - 1].first == m_session_bytes[i].first) {
      m_session_bytes[merged - 1].second += m_session_bytes[i].second;
    } else {
      m_session_bytes[merged++] = m_session_bytes[i];
    }
  }
  m_session_bytes.resize(merged);
  for (const stitch::SessionRecord& session : batch.sessions) {
    write_session(session, take_session_bytes(session.id));
  }
  // Not expected (an event changes its session's snapshot, so the batch
  // holds it), but counted all the same.
  for (const auto& [session, bytes] : m_session_bytes) {
    if (bytes != 0) {
      m_add_stored_bytes.bind_int(1, session);
      m_add_stored_bytes.bind_int(2, bytes);
      m_add_stored_bytes.run();
    }
  }
  write_events(batch);
  write_regions(batch);
  for (const stitch::ChildRecord& child : batch.children) {
    write_child(child);
  }
  if (!batch.uid_stats.empty()) {
    const std::string now = proto::format_utc_timestamp(proto::unix_now_us());
    for (const UidStatRow& row : batch.uid_stats) {
      m_uid_stats.bind_int(1, row.uid);
      m_uid_stats.bind_int(2, static_cast<std::int64_t>(row.lines));
      m_uid_stats.bind_int(3, static_cast<std::int64_t>(row.dropped));
      m_uid_stats.bind_text(4, now);
      m_uid_stats.run();
    }
  }
  for (const ProblemRow& problem : batch.problems) {
    m_insert_problem.bind_int(1, problem.session);
    m_insert_problem.bind_int(2, problem.seq);
    m_insert_problem.bind_text(3, batch.text(problem.message));
    m_insert_problem.run();
  }
  if (!batch.file_offsets.empty()) {
    const std::string now = proto::format_utc_timestamp(proto::unix_now_us());
    for (const FileOffsetRow& row : batch.file_offsets) {
      if (row.forget) {
        m_forget_offset.bind_text(1, batch.text(row.key));
        m_forget_offset.run();
        continue;
      }
      m_upsert_offset.bind_text(1, batch.text(row.key));
      m_upsert_offset.bind_text(2, batch.text(row.path));
      m_upsert_offset.bind_int(3, static_cast<std::int64_t>(row.offset));
      m_upsert_offset.bind_int(4, row.finished ? 1 : 0);
      m_upsert_offset.bind_text(5, now);
      m_upsert_offset.run();
    }
  }
  for (const RejectRow& reject : batch.rejects) {
    m_insert_reject.bind_text(1, proto::format_utc_timestamp(reject.received_us));
    m_insert_reject.bind_text(2, ingest::to_string(reject.source));
    m_insert_reject.bind(3, reject.peer_pid);
    m_insert_reject.bind(4, reject.peer_uid);
    m_insert_reject.bind_text(5, batch.text(reject.reason));
    m_insert_reject.bind_blob(6, batch.text(reject.raw));
    m_insert_reject.bind_int(7, static_cast<std::int64_t>(reject.size));
    m_insert_reject.run();
  }
  // Last: what this batch wrote of a session before its command was known
  // goes with what earlier batches wrote.
  if (!batch.withheld.empty()) {
    const std::string now = proto::format_utc_timestamp(proto::unix_now_us());
    for (const stitch::WithheldRecord& withheld : batch.withheld) {
      withhold(withheld, now);
    }
  }
}

void RowWriter::withhold(const stitch::WithheldRecord& withheld, const std::string& now) {
  if (withheld.first) {
    m_eraser.erase(withheld.session);
    m_unqueue_session.bind_int(1, withheld.session);
    m_unqueue_session.run();
  }
  m_count_withheld.bind_int(1, withheld.uid);
  m_count_withheld.bind_text(2, withheld.rule);
  m_count_withheld.bind_int(3, withheld.first ? 1 : 0);
  m_count_withheld.bind_int(4, withheld.events);
  m_count_withheld.bind_text(5, now);
  m_count_withheld.run();
}

void RowWriter::write_events(const WriteBatch& batch) {
  const auto bind_row = [&](db::Statement& stmt, int base, const EventRow& row) {
    stmt.bind_int(base + 1, row.session);
    stmt.bind_int(base + 2, row.seq);
    stmt.bind_int(base + 3, row.type);
    stmt.bind(base + 4, row.thread);
    stmt.bind(base + 5, row.time_us);
    stmt.bind(base + 6, row.file);
    stmt.bind(base + 7, row.line);
    // The batch outlives the statement's run: no copy needed.
    stmt.bind_text_static(base + 8, batch.text(row.body));
    if (row.raw.present) {
      stmt.bind_blob_static(base + 9, batch.text(row.raw));
    } else {
      stmt.bind_null(base + 9);
    }
    db::bind_leading_columns(stmt, base + 10, row.leading);
  };
  write_rows(batch.events, k_event_columns, m_insert_events_multi, m_insert_event, bind_row);
}

std::int64_t RowWriter::take_session_bytes(std::int64_t session) {
  const auto it = std::lower_bound(m_session_bytes.begin(), m_session_bytes.end(), std::pair{session, INT64_MIN});
  if (it == m_session_bytes.end() || it->first != session) {
    return 0;
  }
  return std::exchange(it->second, 0);
}

void RowWriter::write_session(const stitch::SessionRecord& r, std::int64_t added_bytes) {
  using Change = stitch::SessionRecord::Change;
  // Binds ?1..?`count` of the session statements (see k_session_parameters).
  const auto bind = [&r](db::Statement& s, int count) {
    s.bind(1, r.evt);
    s.bind(2, r.exe);
    s.bind(3, r.argv);
    s.bind(4, r.cmd_name);
    s.bind(5, r.hierarchy);
    s.bind(6, r.cmd_mode);
    s.bind(7, r.worktree);
    s.bind(8, r.cmd_path);
    bind_time(s, 9, r.end_time_us);
    s.bind(10, r.elapsed);
    s.bind(11, r.exit_code);
    s.bind(12, r.signo);
    s.bind_text(13, stitch::to_string(r.status));
    s.bind_int(14, r.event_count);
    s.bind_int(15, r.error_count);
    s.bind_int(16, r.problem_count);
    bind_time(s, 17, r.last_received_us);
    s.bind(18, r.time_base_us);
    s.bind(19, r.argv_key);
    s.bind(20, r.process_start_us);
    s.bind(21, r.nickname);
    bind_time(s, 22, r.start_time_us);
    s.bind(23, r.sid_pid);
    s.bind_int(24, r.id);
    if (count < k_session_parameters) {
      return;
    }
    s.bind_text(25, r.sid);
    // What the SID says, always (whose tree it is in is tree_sid's).
    if (const auto parent = proto::sid_parent(r.sid)) {
      s.bind_text(26, *parent);
    } else {
      s.bind_null(26);
    }
    s.bind_text(27, proto::sid_root(r.sid));
    s.bind_int(28, static_cast<std::int64_t>(proto::sid_depth(r.sid)));
    s.bind_text(29, ingest::to_string(r.source));
    s.bind(30, r.peer_pid);
    s.bind(31, r.peer_uid);
    bind_time(s, 32, r.first_received_us);
  };
  const auto row_bytes = static_cast<std::int64_t>(session_row_bytes(r));
  // Most snapshots of a session come after its row exists: updating only
  // what can change, and its indexes only when its placement (the indexed
  // columns) changed, is much cheaper than an upsert.
  if (r.change != Change::fresh) {
    db::Statement& u = r.change == Change::placement ? m_update_session_indexed : m_update_session;
    bind(u, k_session_update_parameters);
    u.bind_int(k_session_bytes_parameter, added_bytes);
    u.bind_int(k_row_bytes_parameter, row_bytes);
    u.bind_int(k_session_lines_lost_parameter, r.lines_lost);
    u.run();  // charges the row's difference (charge_row)
    if (m_db.changes() > 0) {
      write_lost_lines_problem(r);
      return;
    }
    // The row is gone (retention pruned it meanwhile): write it whole.
  }
  bind(m_upsert_session, k_session_parameters);
  m_upsert_session.bind_int(k_session_bytes_parameter, added_bytes);
  m_upsert_session.bind_int(k_row_bytes_parameter, row_bytes);
  m_row_charges.push_back(RowCharge{r.peer_uid, row_bytes});
  // Set once, with the row: a session's lineage never changes.
  m_upsert_session.bind_text(k_session_tree_parameter,
                             r.tree_sid.empty() ? proto::sid_root(r.sid) : std::string_view(r.tree_sid));
  m_upsert_session.bind_int(k_session_lines_lost_parameter, r.lines_lost);
  m_upsert_session.run();
  write_lost_lines_problem(r);
}

// A session that lost lines says so in a problem row of its own (seq -1,
// before any event's), rewritten with each snapshot as the count grows.
void RowWriter::write_lost_lines_problem(const stitch::SessionRecord& r) {
  if (r.lines_lost == 0) {
    return;
  }
  m_insert_problem.bind_int(1, r.id);
  m_insert_problem.bind_int(2, stitch::k_lost_lines_problem_seq);
  m_insert_problem.bind_text(3, stitch::lost_lines_message(r));
  m_insert_problem.run();
}

void RowWriter::charge_row(sqlite3_context* context, int /*argc*/, sqlite3_value** argv) {
  auto* writer = static_cast<RowWriter*>(sqlite3_user_data(context));
  const sqlite3_int64 before = sqlite3_value_int64(argv[1]);
  const sqlite3_int64 after = sqlite3_value_int64(argv[2]);
  if (after != before) {
    std::optional<std::int64_t> uid;
    if (sqlite3_value_type(argv[0]) != SQLITE_NULL) {
      uid = sqlite3_value_int64(argv[0]);
    }
    writer->m_row_charges.push_back(RowCharge{uid, after - before});
  }
  sqlite3_result_int64(context, after);
}

RowWriter::~RowWriter() {
  // The statements that call it are finalized with the members (after this
  // body); none runs again. The function goes with the writer's pointer.
  sqlite3_create_function_v2(m_db.handle(), "trace2d_charge_row", 3, SQLITE_UTF8 | SQLITE_DIRECTONLY, nullptr,
                             nullptr, nullptr, nullptr, nullptr);
}

void RowWriter::write_regions(const WriteBatch& batch) {
  const auto bind_row = [&](db::Statement& s, int base, const RegionRow& r) {
    s.bind_int(base + 1, r.session);
    s.bind_int(base + 2, r.seq);
    s.bind(base + 3, r.thread);
    s.bind(base + 4, r.nesting);
    s.bind(base + 5, r.category);
    s.bind(base + 6, r.label);
    if (r.msg.present) {
      s.bind_text_static(base + 7, batch.text(r.msg));
    } else {
      s.bind_null(base + 7);
    }
    s.bind(base + 8, r.repo);
    s.bind(base + 9, r.t_start);
    s.bind(base + 10, r.elapsed);
    s.bind(base + 11, r.parent_seq);
    s.bind(base + 12, r.leave_seq);
    int column = base + 13;
    for (const TextRef& text : {r.thread_text, r.category_text, r.label_text}) {
      if (text.present) {
        s.bind_text_static(column, batch.text(text));
      } else {
        s.bind_null(column);
      }
      ++column;
    }
  };
  write_rows(batch.regions, k_region_columns, m_write_regions_multi, m_write_region, bind_row);
}

void RowWriter::write_child(const stitch::ChildRecord& c) {
  db::Statement& s = m_merge_child;
  s.bind_int(1, c.session);
  s.bind_int(2, c.child_id);
  s.bind(3, c.start_seq);
  s.bind(4, c.child_class);
  s.bind(5, c.hook_name);
  s.bind(6, c.argv);
  s.bind(7, c.argv_key);
  s.bind(8, c.use_shell ? std::optional<std::int64_t>(*c.use_shell ? 1 : 0) : std::nullopt);
  s.bind(9, c.cd);
  s.bind(10, c.start_us);
  s.bind(11, c.t_start);
  s.bind(12, c.pid);
  s.bind(13, c.code);
  s.bind(14, c.ready);
  s.bind(15, c.elapsed);
  s.bind(16, c.end_us);
  s.bind(17, c.end_seq);
  s.run();
}

}  // namespace trace2d::store
