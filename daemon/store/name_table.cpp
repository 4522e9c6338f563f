#include "daemon/store/name_table.hpp"

#include <algorithm>
#include <utility>

namespace trace2d::store {

void NameTable::load(Database& db) {
  Statement stmt = db.prepare("SELECT id, text FROM names");
  const std::lock_guard lock(m_mutex);
  while (stmt.step()) {
    const std::int64_t id = stmt.column_int(0);
    m_ids.emplace(std::string(stmt.column_text(1)), id);
    m_next_id = std::max(m_next_id, id + 1);
  }
}

std::optional<std::int64_t> NameTable::intern(std::string_view text, WriteBatch& batch) {
  if (auto found = m_ids.find(text); found != m_ids.end()) {
    return found->second;
  }
  if (text.size() > k_max_name_bytes || m_ids.size() >= m_max_names ||
      text.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  const std::int64_t id = m_next_id++;
  std::string key(text);
  {
    const std::lock_guard lock(m_mutex);
    m_ids.emplace(std::move(key), id);
  }
  batch.names.push_back(NameRow{id, batch.add_text(text)});
  return id;
}

std::vector<std::pair<std::int64_t, std::string>> NameTable::snapshot() const {
  const std::lock_guard lock(m_mutex);
  std::vector<std::pair<std::int64_t, std::string>> names;
  names.reserve(m_ids.size());
  for (const auto& [text, id] : m_ids) {
    names.emplace_back(id, text);
  }
  return names;
}

}  // namespace trace2d::store
