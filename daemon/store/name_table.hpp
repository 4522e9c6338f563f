#pragma once
// Interns the short strings that repeat in every event (event names, thread
// names, source files) as integer ids in the `names` table.
//
// One thread interns (the pipeline thread); the store writer may take a
// snapshot from its own thread to write the names again into a database
// that was recreated. Lookups, the hot path, take no lock: only the
// interning thread changes the map, and it changes it under the mutex the
// snapshot holds.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/store/sqlite.hpp"
#include "daemon/store/write_batch.hpp"

namespace trace2d::store {

class NameTable {
 public:
  static constexpr std::size_t k_max_name_bytes = 256;
  static constexpr std::size_t k_default_max_names = 100000;

  explicit NameTable(std::size_t max_names = k_default_max_names) : m_max_names(max_names) {}

  // Loads every name already in the database.
  void load(Database& db);

  // The id of `text`, adding a `names` row to `batch` the first time. nullopt
  // for text that is not worth interning (too long, NUL, table full): the
  // event is then stored whole instead.
  [[nodiscard]] std::optional<std::int64_t> intern(std::string_view text, WriteBatch& batch);

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
  std::int64_t m_next_id = 1;
  std::size_t m_max_names;
};

}  // namespace trace2d::store
