#pragma once
// Deletes one session with everything it owns (events, regions, children,
// problems, its row), on the caller's transaction. Shared by retention and
// by the storage rule, so that both leave no orphaned rows behind.

#include <cstdint>

#include "db/sqlite.hpp"

namespace trace2d::store {

class SessionEraser {
 public:
  explicit SessionEraser(db::Database& db);
  void erase(std::int64_t session_id);

 private:
  db::Statement m_events;
  db::Statement m_regions;
  db::Statement m_children;
  db::Statement m_problems;
  db::Statement m_session;
};

}  // namespace trace2d::store
