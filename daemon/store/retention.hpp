#pragma once
// Keeps the database within its configured age and size: deletes whole
// sessions and rejects, a few at a time. Each step is one short transaction
// on the writer's connection. Under a size bound there are two levels:
// - while batches come, steps delete back under 1% below the bound (the
//   slack), and run between two commits too once pages in use pass it;
// - once ingest is quiet (no commit for a second: StoreWriter), steps go on
//   down to the headroom under the bound (Options::idle_headroom_bytes, at
//   least the slack).
// Deleting a session costs the store thread about what inserting it did
// (its rows out of the same B-trees), so a burst that had to delete as
// much as it stores gave the thread twice the work while the queue filled
// (growth_bench); with the headroom freed beforehand, it only inserts until
// the headroom is full.
// The file is given back (incremental vacuum) only what takes it over the
// bound or what is free beyond the headroom: the inserts fill the pages the
// deletions free, rather than every freed page being given back and the
// file grown again (each page given back is a page moved and its parent
// rewritten).
//
// Every local user can write into the database, so the size bound must not
// let one of them push everyone else out: over the bound, the sender (uid)
// holding the most bytes loses its oldest data first (its rejects and
// sessions alike, running ones included), and a quiet user's sessions go
// only once it holds the most. By age, everything goes: rejects, and
// sessions left `running` that have not sent anything for that long.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/settings/setting.hpp"
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
    // Under a size bound, pages in use are brought this far under it once
    // ingest is quiet (at least slack_bytes()): what the bound gives up for
    // bursts to be stored without deleting at the same time.
    std::uint64_t idle_headroom_bytes = 0;
  };

  Retention(db::Database& db, Options options);

  [[nodiscard]] bool enabled() const { return m_options.max_age || m_options.max_db_bytes > 0; }
  // Deletes one step's worth of sessions and rejects, in its own
  // transaction. Returns whether it found any (so more may be due).
  // `quiet`: ingest has paused, and the step deletes down to the headroom;
  // otherwise only down to the slack.
  bool step(bool quiet = true);
  // Pages in use are over the bound less the slack: a step is due even
  // while batches wait (there may be no pause at full rate). Reads the
  // page counts (the database header): no table is read.
  [[nodiscard]] bool due_while_busy();

  [[nodiscard]] std::uint64_t sessions_deleted() const { return m_sessions_deleted; }
  [[nodiscard]] std::uint64_t events_deleted() const { return m_events_deleted; }
  [[nodiscard]] std::uint64_t rejects_deleted() const { return m_rejects_deleted; }
  // Bytes of the database in use (pages minus free pages).
  [[nodiscard]] std::uint64_t used_bytes();
  // Under the size bound, pages in use are kept this much below it: the
  // room inside the file that the next inserts fill.
  [[nodiscard]] std::uint64_t slack_bytes() const { return m_options.max_db_bytes / 100; }
  // How far under the bound quiet steps bring pages in use: the configured
  // headroom, at least the slack, at most half the bound.
  [[nodiscard]] std::uint64_t headroom_bytes() const {
    return std::clamp(m_options.idle_headroom_bytes, slack_bytes(), m_options.max_db_bytes / 2);
  }
  // The last step left more pages in use than the bound.
  [[nodiscard]] bool over_bound() const { return m_over_bound; }
  // A batch was committed: what it stored counts for its senders from now
  // on, so the per-uid totals never need reading again. The sessions the
  // storage rule withheld in it count neither this batch's rows (erased
  // with them) nor, through `erased`, what earlier batches stored of them.
  void add_committed(const WriteBatch& batch);
  void subtract_erased(const std::vector<RowWriter::Erased>& erased);
  // What the sessions rows of the committed batches grew by (their SIDs,
  // texts and index entries: RowWriter::take_row_charges).
  void add_row_charges(const std::vector<RowWriter::RowCharge>& charges);

 private:
  // What one step deletes.
  struct Doomed {
    std::vector<std::int64_t> sessions;
    std::vector<std::int64_t> rejects;
    std::uint64_t events = 0;
    std::uint64_t bytes = 0;  // stored bytes, as counted in `sessions.stored_bytes`
    [[nodiscard]] bool empty() const { return sessions.empty() && rejects.empty(); }
  };
  struct Pages {
    std::uint64_t count = 0;
    std::uint64_t free = 0;
    std::uint64_t size = 4096;
    [[nodiscard]] std::uint64_t used_bytes() const { return (count - std::min(count, free)) * size; }
  };
  // Pages given back to the file system in one step, at most.
  static constexpr std::uint64_t k_vacuum_pages_per_step = 2000;
  // uid as stored (NULL for senders without one), for a std::map key.
  static constexpr std::int64_t k_no_uid = INT64_MIN;

  void collect_by_age(Doomed& doomed);
  // Deletes toward `keep` bytes of pages in use, from `used`.
  void collect_by_size(Doomed& doomed, std::uint64_t used, std::uint64_t keep);
  Pages pages();
  // Free pages the step gives back (incremental vacuum); `deleted`: the
  // step deleted something.
  [[nodiscard]] std::uint64_t pages_to_give_back(const Pages& p, bool deleted) const;
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
  bool m_over_bound = false;
  std::vector<std::pair<std::int64_t, std::int64_t>> m_batch_uids;  // session id, uid: add_committed()
  std::uint64_t m_sessions_deleted = 0;
  std::uint64_t m_events_deleted = 0;
  std::uint64_t m_rejects_deleted = 0;
};

// The [retention] settings as the configuration writes them (on by
// default, so that no user can fill the disk for good); options() makes a
// Retention's options from them.
struct RetentionSettings {
  // Sessions and rejects older than this are deleted ("" keeps everything).
  std::string max_age = "30d";
  // While the database is larger (0: no bound), the biggest sender's
  // oldest data is deleted.
  std::uint64_t max_db_bytes = 10ULL << 30;
  // Percent of max_db_bytes freed once ingest is quiet, so that a burst is
  // stored without deleting at the same time (at least 1%).
  std::uint64_t headroom_percent = 5;

  [[nodiscard]] Retention::Options options() const;

  // "90s", "15m", "12h", "30d", "2w" (a number alone is seconds); nullopt
  // when the text is none of those.
  [[nodiscard]] static std::optional<std::chrono::seconds> parse_age(std::string_view text);
  static std::string age_problem(const std::string& text);

  // The settings that fill these ([retention], docs/configuration.md);
  // `Self` is RetentionSettings or const RetentionSettings.
  template <typename Self, typename Visitor>
  static void visit_settings(Self& o, Visitor& v) {
    using settings::Key;
    using settings::Range;
    v.text(Key{"retention", "max_age", "--retention-max-age", "AGE",
               "Delete sessions and rejects older than this (90s, 15m, 12h, 30d, 2w; \"\": keep)"},
           o.max_age, age_problem);
    v.integer(Key{"retention", "max_db_bytes", "--retention-max-db-bytes", "BYTES",
                  "While the database is larger, delete the biggest sender's oldest data (0: no bound)"},
              o.max_db_bytes, Range{0, 1LL << 50});
    v.integer(Key{"retention", "headroom_percent", "--retention-headroom-percent", "PERCENT",
                  "Under the size bound, keep this much of it free while idle, for bursts (at least 1)"},
              o.headroom_percent, Range{0, 50});
  }
};

}  // namespace trace2d::store
