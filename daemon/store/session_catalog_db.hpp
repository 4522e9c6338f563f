#pragma once
// SessionCatalog over the database, on its own read-only connection (WAL
// lets it read while the writer writes). It sees committed rows only; the
// stitcher keeps uncommitted sessions in memory, so that is enough.

#include <string>

#include "daemon/stitch/session_catalog.hpp"
#include "daemon/store/sqlite.hpp"

namespace trace2d::store {

class DatabaseSessionCatalog final : public stitch::SessionCatalog {
 public:
  explicit DatabaseSessionCatalog(const std::string& path);
  [[nodiscard]] std::optional<stitch::SessionRecord> find(std::string_view sid) override;
  // One more than the largest session key stored.
  [[nodiscard]] std::int64_t next_session_id();

 private:
  Database m_db;
  Statement m_find;
};

}  // namespace trace2d::store
