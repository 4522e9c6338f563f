#pragma once
// Writes the rows of WriteBatches with prepared statements. Transactions are
// the caller's (StoreWriter's) business.

#include "daemon/store/sqlite.hpp"
#include "daemon/store/write_batch.hpp"

namespace trace2d::store {

class RowWriter {
 public:
  explicit RowWriter(Database& db);
  void write(const WriteBatch& batch);

 private:
  void write_events(const WriteBatch& batch);
  void write_session(const stitch::SessionRecord& session);
  void write_region(const WriteBatch& batch, const RegionRow& region);
  void write_child(const stitch::ChildRecord& child);

  static constexpr int k_event_columns = 9;
  static constexpr std::size_t k_events_per_insert = 64;

  Statement m_insert_name;
  Statement m_insert_event;
  Statement m_insert_events_multi;
  Statement m_insert_problem;
  Statement m_insert_reject;
  Statement m_upsert_offset;
  Statement m_forget_offset;
  Statement m_upsert_session;
  Statement m_write_region;
  Statement m_merge_child;
  Statement m_uid_stats;
};

}  // namespace trace2d::store
