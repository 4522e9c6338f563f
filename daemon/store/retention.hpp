#pragma once
// Keeps the database within its configured age and size: deletes whole
// sessions, oldest first, a few at a time. Each step is one short
// transaction on the writer's connection, run only when no batch is waiting,
// so pruning never holds up ingestion; freed pages go back to the file
// system through incremental vacuum.

#include <chrono>
#include <cstdint>
#include <optional>

#include "daemon/store/sqlite.hpp"

namespace trace2d::store {

class Retention {
 public:
  struct Options {
    std::optional<std::chrono::seconds> max_age;
    std::uint64_t max_db_bytes = 0;              // 0: no bound
    std::uint64_t max_events_per_step = 20000;   // keeps each transaction short
  };

  Retention(Database& db, Options options);

  [[nodiscard]] bool enabled() const { return m_options.max_age || m_options.max_db_bytes > 0; }
  // Deletes one step's worth of sessions, in its own transaction. Returns
  // whether it found any (so more may be due).
  bool step();

  [[nodiscard]] std::uint64_t sessions_deleted() const { return m_sessions_deleted; }
  [[nodiscard]] std::uint64_t events_deleted() const { return m_events_deleted; }
  // Bytes of the database in use (pages minus free pages).
  [[nodiscard]] std::uint64_t used_bytes();

 private:
  Database& m_db;
  Options m_options;
  Statement m_oldest_by_age;
  Statement m_oldest;
  Statement m_delete_events;
  Statement m_delete_regions;
  Statement m_delete_children;
  Statement m_delete_problems;
  Statement m_delete_session;
  std::uint64_t m_sessions_deleted = 0;
  std::uint64_t m_events_deleted = 0;
};

}  // namespace trace2d::store
