#include "daemon/store/session_eraser.hpp"

namespace trace2d::store {

SessionEraser::SessionEraser(db::Database& db)
    : m_events(db.prepare("DELETE FROM event_store WHERE session = ?")),
      m_regions(db.prepare("DELETE FROM region_store WHERE session = ?")),
      m_children(db.prepare("DELETE FROM child_store WHERE session = ?")),
      m_problems(db.prepare("DELETE FROM problem_store WHERE session = ?")),
      m_session(db.prepare("DELETE FROM sessions WHERE id = ?")) {}

void SessionEraser::erase(std::int64_t session_id) {
  for (db::Statement* stmt : {&m_events, &m_regions, &m_children, &m_problems, &m_session}) {
    stmt->bind_int(1, session_id);
    stmt->run();
  }
}

}  // namespace trace2d::store
