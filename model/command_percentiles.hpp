#pragma once
// Each command's p99 run time, for detail by outcome (a run slower than its
// command's p99 is sent in more detail: docs/otlp.md, "Detail by outcome").
// The same nearest-rank percentile as the command_stats view, over a
// bounded window of recent finished runs, so that the cost of asking stays
// bounded however large the database grows.
//
// Per sender: a uid's runs are measured against that uid's runs only, each
// sender with its own window. Otherwise one sender's flood of fast runs of
// a command would make every other user's ordinary runs "slow" (sent in
// more detail), and a flood of any runs would push the others' out of the
// window.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "db/sqlite.hpp"

namespace trace2d::model {

struct PercentileWindow {
  int days = 7;                   // runs that started this recently
  std::int64_t max_runs = 100000;  // each sender's newest this many at most
  std::int64_t min_runs = 20;      // fewer runs of a command give it no p99: one slow run is not a pattern
};

// The p99 of elapsed (seconds) of each sender's commands, of the runs in
// its window that exited (as command_stats: those with an elapsed).
class CommandPercentiles {
 public:
  // The p99 of `cmd_name` among `uid`'s runs (no uid: `trace2d import`'s
  // sessions), if it has enough of them.
  [[nodiscard]] std::optional<double> p99(std::optional<std::int64_t> uid, const std::string& cmd_name) const;

  void set(std::optional<std::int64_t> uid, std::string cmd_name, double p99);

 private:
  static constexpr std::int64_t k_no_uid = -1;  // never a uid: uid_t is unsigned
  std::unordered_map<std::int64_t, std::unordered_map<std::string, double>> m_by_uid;
};

// One sender's runs in its window, newest first, by the index
// (peer_uid, first_received): ?1 the uid (NULL: no uid), ?2 the window's
// age ("-7 days"), ?3 its bound in runs. A command name over 128 bytes is
// not a command git runs (git's are words like "fetch"): those runs have no
// p99, so that a window never holds more than 128 bytes of name a run.
inline constexpr std::string_view k_sender_runs_sql =
    "SELECT cmd_name, elapsed FROM sessions"
    " WHERE peer_uid IS ?1 AND first_received >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2)"
    "   AND start_time >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2)"
    "   AND elapsed IS NOT NULL AND length(cmd_name) <= 128"
    " ORDER BY first_received DESC LIMIT ?3";

[[nodiscard]] CommandPercentiles command_p99(db::Database& db, const PercentileWindow& window = {});

}  // namespace trace2d::model
