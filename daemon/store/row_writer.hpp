#pragma once
// Writes the rows of WriteBatches with prepared statements. Transactions are
// the caller's (StoreWriter's) business.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/store/row_cost.hpp"
#include "daemon/store/session_eraser.hpp"
#include "daemon/store/write_batch.hpp"
#include "db/event_codec.hpp"
#include "db/sqlite.hpp"

namespace trace2d::store {

// What an event row counts in its session's `stored_bytes` (and so for its
// sender, against retention's size bound): the pages it takes, with the
// names it added (row_cost.hpp).
[[nodiscard]] inline std::uint64_t stored_bytes(const EventRow& row) { return event_row_bytes(row); }

class RowWriter {
 public:
  explicit RowWriter(db::Database& db);
  ~RowWriter();
  // Its connection calls back into it (trace2d_charge_row): it stays where it is made.
  RowWriter(const RowWriter&) = delete;
  RowWriter& operator=(const RowWriter&) = delete;
  void write(const WriteBatch& batch);

  // What the sessions rows written since the last call grew (or shrank) by,
  // as their `row_bytes` (row_cost.hpp): (peer_uid, bytes), for retention's
  // per-sender totals (Retention::add_row_charges). Cleared with a
  // rolled-back transaction by forget_erased().
  struct RowCharge {
    std::optional<std::int64_t> uid;
    std::int64_t bytes = 0;
  };
  [[nodiscard]] std::vector<RowCharge> take_row_charges() { return std::exchange(m_row_charges, {}); }

  // What the storage rule erased since the last call, as `stored_bytes`
  // had counted it before the batch that erased it: (peer_uid, bytes), for
  // retention's per-sender totals (Retention::add_committed). Cleared with
  // a rolled-back transaction by forget_erased().
  struct Erased {
    std::optional<std::int64_t> uid;
    std::int64_t bytes = 0;
  };
  [[nodiscard]] std::vector<Erased> take_erased() { return std::exchange(m_erased, {}); }
  void forget_erased() {
    m_erased.clear();
    m_row_charges.clear();
  }

 private:
  // trace2d_charge_row(peer_uid, old row_bytes, new row_bytes), called by
  // the UPDATE of a session's row with the values it replaces: it records
  // the difference for retention and gives the new value.
  static void charge_row(sqlite3_context* context, int argc, sqlite3_value** argv);
  void write_events(const WriteBatch& batch);
  // `added_bytes`: the bytes of this batch's events of the session, added
  // to its stored_bytes in the same write.
  void write_lost_lines_problem(const stitch::SessionRecord& r);
  void write_session(const stitch::SessionRecord& session, std::int64_t added_bytes);
  // This batch's bytes of `session` (then 0: counted once).
  std::int64_t take_session_bytes(std::int64_t session);
  void write_regions(const WriteBatch& batch);
  void write_child(const stitch::ChildRecord& child);
  void withhold(const stitch::WithheldRecord& withheld, const std::string& now);

  // Full groups of k_rows_per_insert rows go through `multi`, the rest
  // one by one through `single`.
  template <typename Row, typename BindRow>
  static void write_rows(const std::vector<Row>& rows, int columns, db::Statement& multi, db::Statement& single,
                         const BindRow& bind_row) {
    std::size_t i = 0;
    for (; i + k_rows_per_insert <= rows.size(); i += k_rows_per_insert) {
      for (std::size_t k = 0; k < k_rows_per_insert; ++k) {
        bind_row(multi, static_cast<int>(k) * columns, rows[i + k]);
      }
      multi.run_rebinding_all();
    }
    for (; i < rows.size(); ++i) {
      bind_row(single, 0, rows[i]);
      single.run_rebinding_all();
    }
  }

  static constexpr int k_event_columns = 9 + db::k_leading_column_count;
  static constexpr int k_region_columns = 15;
  static constexpr std::size_t k_rows_per_insert = 64;

  db::Database& m_db;  // for changes(): did an update find its row
  db::Statement m_insert_name;
  db::Statement m_insert_event;
  db::Statement m_insert_events_multi;
  db::Statement m_insert_problem;
  db::Statement m_insert_reject;
  db::Statement m_upsert_offset;
  db::Statement m_forget_offset;
  db::Statement m_upsert_session;
  db::Statement m_update_session;
  db::Statement m_update_session_indexed;
  db::Statement m_write_region;
  db::Statement m_write_regions_multi;
  db::Statement m_merge_child;
  db::Statement m_uid_stats;
  db::Statement m_add_stored_bytes;
  SessionEraser m_eraser;
  db::Statement m_stored_bytes_of;
  db::Statement m_unqueue_session;
  db::Statement m_count_withheld;
  std::vector<Erased> m_erased;
  std::vector<RowCharge> m_row_charges;
  // Bytes of this batch's events per session, added to `stored_bytes`.
  std::vector<std::pair<std::int64_t, std::int64_t>> m_session_bytes;
};

}  // namespace trace2d::store
