#include "daemon/store/name_table.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace trace2d::store {

void NameTable::load(db::Database& db) {
  db::Statement stmt = db.prepare("SELECT id, text FROM names");
  const std::lock_guard lock(m_mutex);
  while (stmt.step()) {
    const std::int64_t id = stmt.column_int(0);
    m_ids.emplace(std::string(stmt.column_text(1)), id);
    m_next_id = std::max(m_next_id, id + 1);
  }
}

std::optional<std::int64_t> NameTable::find(std::string_view text) const {
  if (auto found = m_ids.find(text); found != m_ids.end()) {
    return found->second;
  }
  return std::nullopt;
}

std::size_t NameTable::added_by(std::int64_t uid) const {
  const auto found = m_uids.find(uid);
  return found == m_uids.end() ? 0 : found->second.added;
}

std::uint64_t NameTable::refused_for(std::int64_t uid) const {
  const auto found = m_uids.find(uid);
  return found == m_uids.end() ? 0 : found->second.refused;
}

std::optional<std::int64_t> NameTable::intern(std::string_view text, WriteBatch& batch,
                                              std::optional<std::int64_t> uid) {
  if (auto found = m_ids.find(text); found != m_ids.end()) {
    return found->second;
  }
  if (text.size() > k_max_name_bytes || text.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  if (m_ids.size() >= m_max_names) {
    if (!m_full_logged) {
      m_full_logged = true;
      spdlog::warn("names: the table holds {} names, its bound; new names are stored inline from now on",
                   m_ids.size());
    }
    return std::nullopt;
  }
  if (uid) {
    UidNames& mine = m_uids[*uid];
    if (mine.added >= m_max_names_per_uid) {
      if (mine.refused++ == 0) {
        spdlog::warn("names: uid {} has added {} names, its bound; its new names are stored inline from now on",
                     *uid, mine.added);
      }
      return std::nullopt;
    }
    ++mine.added;
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
