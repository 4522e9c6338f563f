#pragma once
// Interns the short strings that repeat in every event (event names, thread
// names, source files) as integer ids in the `names` table.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

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

  [[nodiscard]] std::size_t size() const { return m_ids.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::int64_t, Hash, std::equal_to<>> m_ids;
  std::int64_t m_next_id = 1;
  std::size_t m_max_names;
};

}  // namespace trace2d::store
