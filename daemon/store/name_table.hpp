#pragma once
// Interns the short strings that repeat in every event (event names, thread
// names, source files) as integer ids in the `names` table.
//
// One thread interns (the pipeline thread); the store writer may take a
// snapshot from its own thread to write the names again into a database
// that was recreated. Lookups, the hot path, take no lock: only the
// interning thread changes the map, and it changes it under the mutex the
// snapshot holds.
//
// Every local user can send names, so the table is shared and bounded
// twice: by its size, and per sender (uid). A name counts against the uid
// that first sent it; a uid over its bound gets no new ids (names already
// in the table, whoever added them, are still found). Without an id the
// caller stores the text inline, so a full table or a greedy user costs
// bytes, never anyone's labels.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "db/sqlite.hpp"
#include "daemon/store/write_batch.hpp"

namespace trace2d::store {

class NameTable {
 public:
  static constexpr std::size_t k_max_name_bytes = 256;
  static constexpr std::size_t k_default_max_names = 100000;
  // git itself sends a few hundred distinct names (event types, source
  // files, thread names, region categories and labels); a user's whole
  // history of git versions and commands stays far below this.
  static constexpr std::size_t k_default_max_names_per_uid = 10000;

  explicit NameTable(std::size_t max_names = k_default_max_names,
                     std::size_t max_names_per_uid = k_default_max_names_per_uid)
      : m_max_names(max_names), m_max_names_per_uid(max_names_per_uid) {}

  // Loads every name already in the database.
  void load(db::Database& db);

  // The id of `text`, adding a `names` row to `batch` the first time, charged
  // to `uid` (nullopt: a trusted sender without a uid, e.g. `trace2d import`,
  // bounded only by the table's size). nullopt for text that is not worth
  // interning (too long, NUL, table full, `uid` over its bound): the caller
  // then stores the text inline.
  [[nodiscard]] std::optional<std::int64_t> intern(std::string_view text, WriteBatch& batch,
                                                   std::optional<std::int64_t> uid = std::nullopt);
  // The id of `text` if it has one; never adds a name.
  [[nodiscard]] std::optional<std::int64_t> find(std::string_view text) const;

  // Names `uid` added, and the new ones it was refused (over its bound).
  // On the interning thread only.
  [[nodiscard]] std::size_t added_by(std::int64_t uid) const;
  [[nodiscard]] std::uint64_t refused_for(std::int64_t uid) const;

  // On the interning thread only.
  [[nodiscard]] std::size_t size() const { return m_ids.size(); }

  // Every (id, text) handed out so far (loaded or interned); any thread.
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::string>> snapshot() const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex m_mutex;  // held to change m_ids, and by snapshot()
  std::unordered_map<std::string, std::int64_t, Hash, std::equal_to<>> m_ids;
  struct UidNames {
    std::size_t added = 0;
    std::uint64_t refused = 0;
  };
  std::int64_t m_next_id = 1;
  std::size_t m_max_names;
  std::size_t m_max_names_per_uid;
  // One entry per uid that sent a new name: as many as there are users.
  std::unordered_map<std::int64_t, UidNames> m_uids;
  bool m_full_logged = false;
};

}  // namespace trace2d::store
