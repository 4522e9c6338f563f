#include "ctl/query/sid.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "ctl/query/analysis_queries.hpp"
#include "ctl/query/restricted_database.hpp"
#include "proto/timestamp.hpp"

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

SidAbbreviator::SidAbbreviator(db::Database& db, const std::vector<std::string>& sids) {
  if (sids.size() > k_bulk_sids) {
    db::Statement stmt = db.prepare("SELECT sid FROM sessions");
    while (stmt.step()) {
      m_sids.emplace_back(stmt.column_text(0));
    }
  } else {
    for (const std::string& sid : sids) {
      m_sids.push_back(sid);
      add_neighbours(db, sid);
    }
    std::sort(m_sids.begin(), m_sids.end());
    m_sids.erase(std::unique(m_sids.begin(), m_sids.end()), m_sids.end());
  }
  m_own.reserve(m_sids.size());
  for (const std::string& sid : m_sids) {
    m_own.push_back(own_part(sid));
  }
  std::sort(m_own.begin(), m_own.end());
}

// The sessions whose own parts can share the most with `sid`'s: among
// top-level SIDs (own part = SID), the nearest on either side in SID order,
// skipping the children that sort between them; among child SIDs, those
// that started within a second of the time its own part begins with.
void SidAbbreviator::add_neighbours(db::Database& db, std::string_view sid) {
  const std::string own(own_part(sid));
  for (const char* sql : {"SELECT sid FROM sessions WHERE sid < ?1 AND instr(sid, '/') = 0 ORDER BY sid DESC LIMIT 1",
                          "SELECT sid FROM sessions WHERE sid > ?1 AND instr(sid, '/') = 0 ORDER BY sid LIMIT 1"}) {
    db::Statement stmt = db.prepare(sql);
    stmt.bind_text(1, own);
    if (stmt.step()) {
      m_sids.emplace_back(stmt.column_text(0));
    }
  }
  // git's own part: 20261122T000429.517133Z-H0a7c9cdf-P000014ca.
  if (own.size() < 23 || own[8] != 'T' || own[15] != '.' || own[22] != 'Z') {
    return;
  }
  const std::string iso = own.substr(0, 4) + "-" + own.substr(4, 2) + "-" + own.substr(6, 2) + "T" +
                          own.substr(9, 2) + ":" + own.substr(11, 2) + ":" + own.substr(13, 2) + own.substr(15, 8);
  const std::optional<std::int64_t> at = proto::parse_utc_timestamp(iso);
  if (!at) {
    return;
  }
  constexpr std::int64_t k_second_us = 1000000;
  db::Statement stmt =
      db.prepare("SELECT sid FROM sessions WHERE start_time >= ?1 AND start_time <= ?2 AND instr(sid, '/') > 0");
  stmt.bind_text(1, proto::format_utc_timestamp(*at - k_second_us));
  stmt.bind_text(2, proto::format_utc_timestamp(*at + k_second_us));
  while (stmt.step()) {
    m_sids.emplace_back(stmt.column_text(0));
  }
}

std::string SidAbbreviator::shorten(std::string_view sid) const {
  const std::string_view own = own_part(sid);
  // Only the neighbours in sorted order can share a longer prefix.
  const auto first = std::lower_bound(m_own.begin(), m_own.end(), own);
  const auto last = std::upper_bound(first, m_own.end(), own);
  if (last - first > 1) {
    return std::string(sid);
  }
  std::size_t shared = 0;
  if (first != m_own.begin()) {
    shared = std::max(shared, common_prefix(own, *(first - 1)));
  }
  if (last != m_own.end()) {
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
    // A user behind the query service sees only their own sessions: that
    // the database is empty would send them looking at the wrong problem.
    const std::string none = is_restricted(db) ? "you have no sessions in the database yet (only your own are visible)"
                                               : "the database holds no sessions yet";
    throw std::runtime_error(cmds.empty() ? none : "no session of command " + names);
  }
  return std::string(stmt.column_text(0));
}

}  // namespace trace2d::ctl
