#pragma once
// SessionCatalog over the database, on its own read-only connection (WAL
// lets it read while the writer writes). It sees committed rows only; the
// stitcher keeps uncommitted sessions in memory, so that is enough.
//
// When the writer recreates a database that was removed under it, this
// connection would go on reading the removed file: `generation` (the
// writer's count of recreations) tells it to open the path again.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "daemon/stitch/session_catalog.hpp"
#include "db/sqlite.hpp"

namespace trace2d::store {

class DatabaseSessionCatalog final : public stitch::SessionCatalog {
 public:
  using Generation = std::function<std::uint64_t()>;

  explicit DatabaseSessionCatalog(const std::string& path, Generation generation = {});
  [[nodiscard]] std::optional<stitch::SessionRecord> find(std::string_view sid) override;
  // One more than the largest session key stored.
  [[nodiscard]] std::int64_t next_session_id();

 private:
  void reopen_if_recreated();

  std::string m_path;
  Generation m_generation;
  std::uint64_t m_seen_generation = 0;
  std::chrono::steady_clock::time_point m_next_reopen_attempt{};
  db::Database m_db;
  db::Statement m_find;
};

}  // namespace trace2d::store
