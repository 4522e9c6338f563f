#pragma once
// The process_* families every Prometheus client library exports (the
// names and units of client_golang's process collector): CPU time, memory,
// descriptors and start time, read from /proc/self at each scrape, so that
// trace2d's own cost sits on a dashboard beside any other service's, under
// the names its queries and alerts already use.

#include <optional>

#include "daemon/metrics/exposition.hpp"

namespace trace2d::metrics {

struct ProcessFigures {
  std::optional<double> cpu_seconds;     // user + system, all threads
  std::optional<double> resident_bytes;  // RSS
  std::optional<double> virtual_bytes;   // the address space's size
  std::optional<double> open_fds;
  std::optional<double> max_fds;  // RLIMIT_NOFILE's soft limit
};

// This process's figures now; one that /proc cannot give is absent.
[[nodiscard]] ProcessFigures read_process_figures();

// The families, each figure that is present; `start_time`: when the
// process started, in seconds since the epoch.
void write_process_metrics(Exposition& out, const ProcessFigures& figures, double start_time);

}  // namespace trace2d::metrics
