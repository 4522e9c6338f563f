#include "ctl/query/sid.hpp"

#include <algorithm>
#include <stdexcept>

#include "ctl/query/analysis_queries.hpp"

namespace trace2d::ctl {
namespace {

std::size_t common_prefix(std::string_view a, std::string_view b) {
  const auto [end, _] = std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(std::min(a.size(), b.size())),
                                      b.begin());
  return static_cast<std::size_t>(end - a.begin());
}

bool exists(db::Database& db, const std::string& sql, const std::string& value) {
  db::Statement stmt = db.prepare(sql);
  stmt.bind_text(1, value);
  return stmt.step();
}

}  // namespace

std::string_view own_part(std::string_view sid) {
  const auto slash = sid.rfind('/');
  return slash == std::string_view::npos ? sid : sid.substr(slash + 1);
}

SidAbbreviator::SidAbbreviator(db::Database& db) {
  db::Statement stmt = db.prepare("SELECT sid FROM sessions");
  while (stmt.step()) {
    m_own_parts.emplace_back(own_part(stmt.column_text(0)));
  }
  std::sort(m_own_parts.begin(), m_own_parts.end());
}

std::string SidAbbreviator::shorten(std::string_view sid) const {
  const std::string_view own = own_part(sid);
  // Only the neighbours in sorted order can share a longer prefix.
  const auto first = std::lower_bound(m_own_parts.begin(), m_own_parts.end(), own);
  const auto last = std::upper_bound(first, m_own_parts.end(), own);
  if (last - first > 1) {
    return std::string(sid);
  }
  std::size_t shared = 0;
  if (first != m_own_parts.begin()) {
    shared = std::max(shared, common_prefix(own, *(first - 1)));
  }
  if (last != m_own_parts.end()) {
    shared = std::max(shared, common_prefix(own, *last));
  }
  return std::string(own.substr(0, std::max(shared + 1, k_min_short_sid)));
}

std::string resolve_sid(db::Database& db, const std::string& text, PrefixRoot prefix_root) {
  const bool allow_prefix_root = prefix_root == PrefixRoot::allow;
  if (exists(db, "SELECT 1 FROM sessions WHERE sid = ?1", text)) {
    return text;
  }
  if (allow_prefix_root &&
      exists(db, "SELECT 1 FROM sessions WHERE sid >= ?1 || '/' AND sid < ?1 || '0' LIMIT 1", text)) {
    return text;
  }
  std::vector<std::string> matches;
  if (!text.empty() && text.find('/') == std::string::npos) {
    // No index helps with a prefix of the last part: scan, then keep the
    // SIDs whose own part starts with the text (instr() finds it anywhere).
    db::Statement stmt = db.prepare("SELECT sid FROM sessions WHERE instr(sid, ?1) > 0 ORDER BY sid");
    stmt.bind_text(1, text);
    while (stmt.step()) {
      std::string sid(stmt.column_text(0));
      if (own_part(sid).substr(0, text.size()) == text) {
        matches.push_back(std::move(sid));
      }
    }
  }
  if (matches.size() == 1) {
    return matches.front();
  }
  if (matches.empty()) {
    throw std::runtime_error("no session with sid '" + text + "'" + (allow_prefix_root ? " (nor any under it)" : ""));
  }
  std::string list;
  constexpr std::size_t k_listed = 5;
  for (std::size_t i = 0; i < matches.size() && i < k_listed; ++i) {
    list += (i > 0 ? ", " : "") + matches[i];
  }
  throw std::runtime_error("short SID '" + text + "' is ambiguous: it begins " + std::to_string(matches.size()) +
                     " sessions' SIDs (" + list + (matches.size() > k_listed ? ", ..." : "") + "); give more of it");
}

std::string latest_sid(db::Database& db, const std::vector<std::string>& cmds) {
  // By start time, as the listings order rows (the index on start_time
  // walked backwards); sessions that never sent one (no `version` event)
  // sort after the rest, NULL being below every text.
  const std::string order = " ORDER BY s.start_time DESC, s.id DESC LIMIT 1";
  std::string sql;
  if (cmds.empty()) {
    sql = "SELECT s.sid FROM sessions s WHERE (s.parent_sid IS NULL OR s.tree_sid = s.sid"
          " OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.sid = s.parent_sid AND p.peer_uid IS s.peer_uid))" +
          order;
  } else {
    Window window;
    window.cmds = cmds;
    sql = "SELECT s.sid FROM sessions s WHERE 1" + window_condition(window) + order;
  }
  db::Statement stmt = db.prepare(sql);
  if (!stmt.step()) {
    std::string names;
    for (const std::string& cmd : cmds) {
      names += (names.empty() ? "'" : ", '") + cmd + "'";
    }
    throw std::runtime_error(cmds.empty() ? std::string("the database holds no sessions yet")
                                          : "no session of command " + names);
  }
  return std::string(stmt.column_text(0));
}

}  // namespace trace2d::ctl
