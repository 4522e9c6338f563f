#pragma once
// Keeps the database within its configured age and size: deletes whole
// sessions and rejects, a few at a time. Each step is one short transaction
// on the writer's connection, run only when no batch is waiting, so pruning
// never holds up ingestion; freed pages go back to the file system through
// incremental vacuum.
//
// Every local user can write into the database, so the size bound must not
// let one of them push everyone else out: over the bound, the sender (uid)
// holding the most bytes loses its oldest data first (its rejects and
// sessions alike, running ones included), and a quiet user's sessions go
// only once it holds the most. By age, everything goes: rejects, and
// sessions left `running` that have not sent anything for that long.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/store/row_writer.hpp"
#include "daemon/store/session_eraser.hpp"
#include "daemon/store/write_batch.hpp"
#include "db/sqlite.hpp"

namespace trace2d::store {

class Retention {
 public:
  struct Options {
    std::optional<std::chrono::seconds> max_age;
    std::uint64_t max_db_bytes = 0;              // 0: no bound
    std::uint64_t max_events_per_step = 20000;   // keeps each transaction short
  };

  Retention(db::Database& db, Options options);

  [[nodiscard]] bool enabled() const { return m_options.max_age || m_options.max_db_bytes > 0; }
  // Deletes one step's worth of sessions and rejects, in its own
  // transaction. Returns whether it found any (so more may be due).
  bool step();

  [[nodiscard]] std::uint64_t sessions_deleted() const { return m_sessions_deleted; }
  [[nodiscard]] std::uint64_t events_deleted() const { return m_events_deleted; }
  [[nodiscard]] std::uint64_t rejects_deleted() const { return m_rejects_deleted; }
  // Bytes of the database in use (pages minus free pages).
  [[nodiscard]] std::uint64_t used_bytes();
  // A batch was committed: what it stored counts for its senders from now
  // on, so the per-uid totals never need reading again. The sessions the
  // storage rule withheld in it count neither this batch's rows (erased
  // with them) nor, through `erased`, what earlier batches stored of them.
  void add_committed(const WriteBatch& batch);
  void subtract_erased(const std::vector<RowWriter::Erased>& erased);

 private:
  // What one step deletes.
  struct Doomed {
    std::vector<std::int64_t> sessions;
    std::vector<std::int64_t> rejects;
    std::uint64_t events = 0;
    std::uint64_t bytes = 0;  // stored bytes, as counted in `sessions.stored_bytes`
    [[nodiscard]] bool empty() const { return sessions.empty() && rejects.empty(); }
  };
  // uid as stored (NULL for senders without one), for a std::map key.
  static constexpr std::int64_t k_no_uid = INT64_MIN;

  void collect_by_age(Doomed& doomed);
  void collect_by_size(Doomed& doomed, std::uint64_t used);
  // Stored bytes per uid, from the database (one scan of sessions and
  // rejects), once: from then on kept by add_committed() and the deletions.
  void load_usage();
  void subtract_usage(std::int64_t uid, std::uint64_t bytes);
  void bind_uid(db::Statement& stmt, int index, std::int64_t uid);

  db::Database& m_db;
  Options m_options;
  db::Statement m_oldest_by_age;
  db::Statement m_rejects_by_age;
  db::Statement m_oldest_of_uid;
  db::Statement m_rejects_of_uid;
  SessionEraser m_eraser;
  db::Statement m_delete_reject;
  // Stored bytes per uid, loaded when the size bound is first exceeded;
  // then what is committed is added and what is deleted subtracted. Reading
  // them again would scan every session row: seconds on the writer thread
  // at tens of millions of events, while git's events pile up behind it.
  std::map<std::int64_t, std::uint64_t> m_usage;
  bool m_usage_loaded = false;
  std::vector<std::pair<std::int64_t, std::int64_t>> m_batch_uids;  // session id, uid: add_committed()
  std::uint64_t m_sessions_deleted = 0;
  std::uint64_t m_events_deleted = 0;
  std::uint64_t m_rejects_deleted = 0;
};

}  // namespace trace2d::store
