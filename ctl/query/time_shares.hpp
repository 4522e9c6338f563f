#pragma once
// Shares of a command's --timeout for the parts of its answer it can do
// without. A report's optional sections (what got slower, what to change)
// read weeks of processes, and on a large database either may need more
// than the whole --timeout: each may use half of the time left; past it,
// the part is left out and says so, and the rest of the answer goes on
// within the command's own limit. A share only ever shortens the limit.

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "db/sqlite.hpp"

namespace trace2d::ctl {

class TimeShares {
 public:
  // `timeout` is the connection's own (open_database()), counted from now;
  // zero: no limit, and no part is ever left out for time.
  TimeShares(db::Database& db, std::chrono::milliseconds timeout);

  // Runs `part` within half the time left. Returns why it was left out
  // (its queries ran out of their share: run `trace2ctl <command>` alone),
  // or "" when it was not. Any other error, and a timeout of the command's
  // own limit, is thrown on.
  std::string run(std::string_view command, const std::function<void()>& part);

 private:
  [[nodiscard]] std::chrono::milliseconds left() const;

  db::Database& m_db;
  std::chrono::milliseconds m_timeout;
  std::chrono::steady_clock::time_point m_end;
};

}  // namespace trace2d::ctl
