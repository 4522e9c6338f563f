#pragma once
// Each command's p99 run time, for detail by outcome (a run slower than its
// command's p99 is sent in more detail: docs/otlp.md, "Detail by outcome").
// The same nearest-rank percentile as the command_stats view, over a
// bounded window of recent finished runs, so that the cost of asking stays
// bounded however large the database grows.

#include <cstdint>
#include <string>
#include <unordered_map>

#include "db/sqlite.hpp"

namespace trace2d::model {

struct PercentileWindow {
  int days = 7;                   // runs that started this recently
  std::int64_t max_runs = 500000;  // the newest this many at most
  std::int64_t min_runs = 20;      // fewer runs of a command give it no p99: one slow run is not a pattern
};

// cmd_name → p99 of elapsed (seconds), of the runs in the window that
// exited (as command_stats: those with an elapsed).
[[nodiscard]] std::unordered_map<std::string, double> command_p99(db::Database& db,
                                                                   const PercentileWindow& window = {});

}  // namespace trace2d::model
