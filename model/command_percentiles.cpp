#include "model/command_percentiles.hpp"

#include <algorithm>
#include <vector>

namespace trace2d::model {

std::optional<double> CommandPercentiles::p99(std::optional<std::int64_t> uid, const std::string& cmd_name) const {
  const auto commands = m_by_uid.find(uid.value_or(k_no_uid));
  if (commands == m_by_uid.end()) {
    return std::nullopt;
  }
  const auto found = commands->second.find(cmd_name);
  if (found == commands->second.end()) {
    return std::nullopt;
  }
  return found->second;
}

void CommandPercentiles::set(std::optional<std::int64_t> uid, std::string cmd_name, double p99) {
  m_by_uid[uid.value_or(k_no_uid)].insert_or_assign(std::move(cmd_name), p99);
}

namespace {

// Nearest rank, the ceil(0.99 n)-th smallest, in command_stats' integers.
double nearest_rank_p99(std::vector<double>& times) {
  const std::size_t rank = (times.size() * 99 + 99) / 100;
  const auto nth = times.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(times.begin(), nth, times.end());
  return *nth;
}

}  // namespace

CommandPercentiles command_p99(db::Database& db, const PercentileWindow& window) {
  // The senders, one index seek each (sessions_uid), not a scan of every
  // session; then each sender's newest runs by the same index. Sorting per
  // command is done here, where SQLite would sort the whole window by
  // (cmd_name, elapsed).
  db::Statement next_uid = db.prepare("SELECT min(peer_uid) FROM sessions WHERE peer_uid > ?1");
  db::Statement runs = db.prepare(k_sender_runs_sql);
  const std::string since = "-" + std::to_string(window.days) + " days";
  CommandPercentiles percentiles;
  const auto measure = [&](std::optional<std::int64_t> uid) {
    if (uid) {
      runs.bind_int(1, *uid);
    } else {
      runs.bind_null(1);
    }
    runs.bind_text(2, since);
    runs.bind_int(3, window.max_runs);
    std::unordered_map<std::string, std::vector<double>> elapsed;
    while (runs.step()) {
      elapsed[std::string(runs.column_text(0))].push_back(runs.column_double(1));
    }
    runs.reset();
    for (auto& [command, times] : elapsed) {
      if (static_cast<std::int64_t>(times.size()) >= window.min_runs) {
        percentiles.set(uid, command, nearest_rank_p99(times));
      }
    }
  };
  measure(std::nullopt);
  for (std::int64_t after = -1;;) {
    next_uid.bind_int(1, after);
    const bool found = next_uid.step() && !next_uid.column_is_null(0);
    if (found) {
      after = next_uid.column_int(0);
    }
    next_uid.reset();
    if (!found) {
      return percentiles;
    }
    measure(after);
  }
}

}  // namespace trace2d::model
