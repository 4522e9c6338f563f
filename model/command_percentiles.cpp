#include "model/command_percentiles.hpp"

#include <algorithm>
#include <vector>

namespace trace2d::model {

std::unordered_map<std::string, double> command_p99(db::Database& db, const PercentileWindow& window) {
  // By the start_time index, newest first, so that the bound keeps the
  // recent runs. Sorting per command is done here, where SQLite would sort
  // the whole window by (cmd_name, elapsed).
  db::Statement runs = db.prepare(
      "SELECT cmd_name, elapsed FROM sessions"
      " WHERE start_time >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?1)"
      "   AND elapsed IS NOT NULL AND cmd_name IS NOT NULL"
      " ORDER BY start_time DESC LIMIT ?2");
  runs.bind_text(1, "-" + std::to_string(window.days) + " days");
  runs.bind_int(2, window.max_runs);
  std::unordered_map<std::string, std::vector<double>> elapsed;
  while (runs.step()) {
    elapsed[std::string(runs.column_text(0))].push_back(runs.column_double(1));
  }
  std::unordered_map<std::string, double> p99;
  for (auto& [command, times] : elapsed) {
    if (static_cast<std::int64_t>(times.size()) < window.min_runs) {
      continue;
    }
    // Nearest rank, the ceil(0.99 n)-th smallest, in command_stats' integers.
    const std::size_t rank = (times.size() * 99 + 99) / 100;
    const auto nth = times.begin() + static_cast<std::ptrdiff_t>(rank - 1);
    std::nth_element(times.begin(), nth, times.end());
    p99.emplace(command, *nth);
  }
  return p99;
}

}  // namespace trace2d::model
