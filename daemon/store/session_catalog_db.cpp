#include "daemon/store/session_catalog_db.hpp"

#include <spdlog/spdlog.h>

#include <utility>

#include "proto/timestamp.hpp"

namespace trace2d::store {
namespace {

constexpr std::string_view k_find_sql =
    "SELECT id, sid, evt, exe, argv, cmd_name, hierarchy, cmd_mode, worktree, cmd_path,"
    " start_time, end_time, elapsed, exit_code, signo, status, source, peer_pid, peer_uid,"
    " event_count, error_count, problem_count, first_received, last_received, time_base_us,"
    " sid_pid, argv_key, process_start_us, nickname, coalesce(tree_sid, root_sid), lines_lost"
    " FROM sessions WHERE sid = ?";

std::optional<std::int64_t> parse_time(const std::optional<std::string>& text) {
  return text ? proto::parse_utc_timestamp(*text) : std::nullopt;
}

}  // namespace

DatabaseSessionCatalog::DatabaseSessionCatalog(const std::string& path, Generation generation)
    : m_path(path),
      m_generation(std::move(generation)),
      m_seen_generation(m_generation ? m_generation() : 0),
      m_db(path, db::OpenMode::read_only) {
  m_db.set_busy_timeout(1000);
  m_find = m_db.prepare(k_find_sql);
}

void DatabaseSessionCatalog::reopen_if_recreated() {
  if (!m_generation) {
    return;
  }
  const std::uint64_t generation = m_generation();
  const auto now = std::chrono::steady_clock::now();
  if (generation == m_seen_generation || now < m_next_reopen_attempt) {
    return;
  }
  try {
    db::Database db(m_path, db::OpenMode::read_only);
    db.set_busy_timeout(1000);
    // Fails here, leaving the old connection in use, if the file is not
    // usable yet; prepared again below because a statement keeps a pointer
    // to the Database object it came from.
    (void)db.prepare(k_find_sql);
    m_find = db::Statement();  // finalized before its connection closes
    m_db = std::move(db);
    m_find = m_db.prepare(k_find_sql);
    m_seen_generation = generation;
  } catch (const db::SqliteError& e) {
    // Until it opens, sessions are looked up in the old file: at worst one
    // stored only there resumes its numbering, which the new file accepts.
    spdlog::warn("store: cannot reopen the recreated database '{}' for reading, will retry: {}", m_path,
                 e.what());
    m_next_reopen_attempt = now + std::chrono::seconds(1);
  }
}

std::optional<stitch::SessionRecord> DatabaseSessionCatalog::find(std::string_view sid) {
  reopen_if_recreated();
  m_find.bind_text(1, sid);
  if (!m_find.step()) {
    m_find.reset();
    return std::nullopt;
  }
  const db::Statement& s = m_find;
  stitch::SessionRecord r;
  r.id = s.column_int(0);
  r.sid = std::string(s.column_text(1));
  r.evt = s.column_optional_text(2);
  r.exe = s.column_optional_text(3);
  r.argv = s.column_optional_text(4);
  r.cmd_name = s.column_optional_text(5);
  r.hierarchy = s.column_optional_text(6);
  r.cmd_mode = s.column_optional_text(7);
  r.worktree = s.column_optional_text(8);
  r.cmd_path = s.column_optional_text(9);
  r.start_time_us = parse_time(s.column_optional_text(10));
  r.end_time_us = parse_time(s.column_optional_text(11));
  r.elapsed = s.column_optional_double(12);
  r.exit_code = s.column_optional_int(13);
  r.signo = s.column_optional_int(14);
  r.status = stitch::session_status_from_string(s.column_text(15)).value_or(stitch::SessionStatus::incomplete);
  const std::string_view source = s.column_text(16);
  for (auto kind : {ingest::SourceKind::stream, ingest::SourceKind::dgram, ingest::SourceKind::dir,
                    ingest::SourceKind::import}) {
    if (ingest::to_string(kind) == source) {
      r.source = kind;
    }
  }
  r.peer_pid = s.column_optional_int(17);
  r.peer_uid = s.column_optional_int(18);
  r.event_count = s.column_int(19);
  r.error_count = s.column_int(20);
  r.problem_count = s.column_int(21);
  r.first_received_us = parse_time(s.column_optional_text(22)).value_or(0);
  r.last_received_us = parse_time(s.column_optional_text(23)).value_or(0);
  r.time_base_us = s.column_optional_int(24);
  r.sid_pid = s.column_optional_int(25);
  r.argv_key = s.column_optional_text(26);
  r.process_start_us = s.column_optional_int(27);
  r.nickname = s.column_optional_text(28);
  r.tree_sid = std::string(s.column_text(29));
  r.lines_lost = s.column_int(30);
  m_find.reset();
  return r;
}

std::int64_t DatabaseSessionCatalog::next_session_id() {
  reopen_if_recreated();
  return m_db.query_int("SELECT max(id) FROM sessions").value_or(0) + 1;
}

}  // namespace trace2d::store
