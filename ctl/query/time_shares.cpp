#include "ctl/query/time_shares.hpp"

#include <algorithm>
#include <cstdio>

#include "ctl/query/database.hpp"

namespace trace2d::ctl {

TimeShares::TimeShares(db::Database& db, std::chrono::milliseconds timeout)
    : m_db(db), m_timeout(timeout), m_end(std::chrono::steady_clock::now() + timeout) {}

std::chrono::milliseconds TimeShares::left() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(m_end - std::chrono::steady_clock::now());
}

std::string TimeShares::run(std::string_view command, const std::function<void()>& part) {
  if (m_timeout <= std::chrono::milliseconds::zero()) {
    part();
    return "";
  }
  const std::chrono::milliseconds share = std::max(left() / 2, std::chrono::milliseconds(1));
  limit_query_time(m_db, share);
  std::string left_out;
  try {
    part();
  } catch (const db::SqliteError& e) {
    if (!is_query_timeout(e) || left() <= std::chrono::milliseconds::zero()) {
      throw;
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", std::chrono::duration<double>(share).count());
    left_out = "Left out: it needed more than its " + std::string(seconds) +
               " s (half of what --timeout left) on this database. Run `trace2ctl " + std::string(command) +
               "` alone for it, with a larger --timeout (0: no limit).";
  }
  // Back to the command's own limit; past it, the share's (earlier) one
  // stays, and the next query stops at once.
  limit_query_time(m_db, left());
  return left_out;
}

}  // namespace trace2d::ctl
