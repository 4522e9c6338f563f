#pragma once
// What `/metrics` says (docs/metrics.md): the daemon's own figures, read
// from the same atomics the status reporter writes to `daemon_status` and
// `source_stats`, then the duration histograms. Runs on an io thread at
// each scrape; reads no database (the export's figures are the exporter's
// last count), only two stat() calls for the file sizes and /proc/self for
// the process_* families.

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/metrics/exposition.hpp"

namespace trace2d::app {

class Backend;
class StatusReporter;

struct HealthFigures {
  Backend& backend;
  StatusReporter& status;
  bool export_enabled = false;
  // The parts that write their own families, in this order, after the
  // daemon's (the export's forwarder, the duration histograms).
  std::vector<const metrics::FigureSource*> components;
  std::string db_path;
};

[[nodiscard]] std::string render_metrics(const HealthFigures& figures, metrics::Format format);

}  // namespace trace2d::app
