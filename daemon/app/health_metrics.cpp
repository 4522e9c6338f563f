#include "daemon/app/health_metrics.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <optional>

#include "daemon/app/backend.hpp"
#include "daemon/app/status_reporter.hpp"
#include "daemon/metrics/process_metrics.hpp"
#include "proto/timestamp.hpp"
#include "trace2d/version.hpp"

namespace trace2d::app {
namespace {

using metrics::Type;

std::optional<double> file_bytes(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  return static_cast<double>(st.st_size);
}

// Per kind of source: a daemon may have several of one kind (each watched
// directory set is one source), and their sum is what an alert wants.
struct PerKind {
  std::array<bool, 4> present{};
  std::array<double, 4> lines{}, bytes{}, opened{}, open{}, refused{}, kernel_drops{};
};

}  // namespace

std::string render_metrics(const HealthFigures& f, metrics::Format format) {
  metrics::Exposition out(format);
  out.family("trace2d_build_info", Type::gauge, "Always 1; the version of the running trace2d.");
  out.value({{"version", k_version}}, 1);
  out.family("trace2d_start_time_seconds", Type::gauge, "When the daemon started, in seconds since the epoch.");
  out.value(static_cast<double>(f.status.started_us()) / 1e6);
  metrics::write_process_metrics(out, metrics::read_process_figures(),
                                 static_cast<double>(f.status.started_us()) / 1e6);

  PerKind kinds;
  for (const StatusReporter::Source& source : f.status.sources()) {
    const auto k = static_cast<std::size_t>(source.kind);
    const auto& c = source.sink->counters();
    kinds.present[k] = true;
    kinds.lines[k] += static_cast<double>(c.lines.load() + c.dropped_lines.load());
    kinds.bytes[k] += static_cast<double>(c.bytes.load());
    kinds.opened[k] += static_cast<double>(c.channels_opened.load());
    kinds.open[k] += static_cast<double>(c.channels_open.load());
    kinds.refused[k] += static_cast<double>(c.channels_refused.load());
    kinds.kernel_drops[k] += source.kernel_drops ? static_cast<double>(source.kernel_drops()) : 0.0;
  }
  auto& parsed = f.backend.worker().counters();
  const auto per_source = [&](std::string_view name, Type type, std::string_view help, auto value_of) {
    out.family(name, type, help);
    for (std::size_t k = 0; k < kinds.present.size(); ++k) {
      if (kinds.present[k]) {
        out.value({{"source", ingest::to_string(static_cast<ingest::SourceKind>(k))}}, value_of(k));
      }
    }
  };
  per_source("trace2d_lines_read", Type::counter, "Lines read from the source.", [&](std::size_t k) { return kinds.lines[k]; });
  per_source("trace2d_bytes_read", Type::counter, "Bytes read from the source.", [&](std::size_t k) { return kinds.bytes[k]; });
  per_source("trace2d_events_parsed", Type::counter, "Lines of the source parsed into events of a session.",
             [&](std::size_t k) { return static_cast<double>(parsed.by_source[k].events.load()); });
  per_source("trace2d_rejects", Type::counter,
             "Lines of the source that became rejects rows (not an event, or refused by the stitcher).",
             [&](std::size_t k) { return static_cast<double>(parsed.by_source[k].rejects.load()); });
  per_source("trace2d_dropped_lines", Type::counter,
             "Lines read from the source and dropped before parsing: past their uid's share of the memory bound "
             "(limits.queue_max_mib) or by the rate valve (limits.per_uid_lines_per_second); the sum of "
             "uid_stats.dropped.",
             [&](std::size_t k) { return static_cast<double>(parsed.by_source[k].dropped.load()); });
  per_source("trace2d_kernel_drops", Type::counter, "Datagrams the kernel dropped before trace2d read them (dgram only).",
             [&](std::size_t k) { return kinds.kernel_drops[k]; });
  per_source("trace2d_connections_opened", Type::counter,
             "Connections (stream), senders (dgram) or files (directories) the source opened.",
             [&](std::size_t k) { return kinds.opened[k]; });
  per_source("trace2d_connections_refused", Type::counter,
             "Connections or files trace2d closed: over a per-uid bound, or silent.",
             [&](std::size_t k) { return kinds.refused[k]; });
  per_source("trace2d_connections_open", Type::gauge, "Connections, senders or files open now.",
             [&](std::size_t k) { return kinds.open[k]; });

  ingest::MemoryBudget& budget = f.backend.budget();
  out.family("trace2d_queue_bytes", Type::gauge, "Bytes queued between the sources and the database now.");
  out.value(static_cast<double>(budget.used()));
  out.family("trace2d_queue_peak_bytes", Type::gauge, "The most bytes ever queued since the daemon started.");
  out.value(static_cast<double>(budget.peak()));
  out.family("trace2d_queue_limit_bytes", Type::gauge, "The memory bound of the queues (limits.queue_max_mib).");
  out.value(static_cast<double>(budget.limit()));

  const stitch::Stitcher& stitcher = f.backend.stitcher();
  out.family("trace2d_live_session_bytes", Type::gauge,
             "Bytes the sessions in memory hold (their text, open regions and children), all uids together; "
             "each uid's are bounded by limits.per_uid_live_mib.");
  out.value(static_cast<double>(stitcher.live_bytes_total()));
  out.family("trace2d_values_cut", Type::counter,
             "Values cut or not kept for the sessions, regions and children columns (over the per-value bound, "
             "or their uid's limits.per_uid_live_mib); the events keep them whole.");
  out.value(static_cast<double>(stitcher.values_cut()));

  store::StoreWriter& writer = f.backend.writer();
  out.family("trace2d_events_committed", Type::counter, "Events committed to the database.");
  out.value(static_cast<double>(writer.committed_events()));
  out.family("trace2d_commit_failures", Type::counter, "Database commits that failed (and were retried).");
  out.value(static_cast<double>(writer.failed_commits()));
  out.family("trace2d_events_abandoned", Type::counter,
             "Events given up at shutdown because the database kept failing.");
  out.value(static_cast<double>(writer.abandoned_events()));
  const store::CommitLatencyHistogram latency = writer.commit_latency_histogram();
  out.family("trace2d_commit_latency_seconds", Type::histogram,
             "Time from reading a batch of lines to committing it to the database, per committed batch.");
  metrics::Histogram histogram(latency.k_bounds_s.size());
  std::copy(latency.buckets.begin(), latency.buckets.end(), histogram.buckets.begin());
  histogram.sum = latency.sum_s;
  histogram.count = latency.count;
  out.histogram({}, latency.k_bounds_s, histogram);
  const store::StoreWriter::RetentionDeleted deleted = writer.retention_deleted();
  out.family("trace2d_retention_deleted_sessions", Type::counter,
             "Sessions retention deleted: older than retention.max_age, or over retention.max_db_bytes (the "
             "sender holding the most first).");
  out.value(static_cast<double>(deleted.sessions));
  out.family("trace2d_retention_deleted_events", Type::counter, "The events of the sessions retention deleted.");
  out.value(static_cast<double>(deleted.events));
  out.family("trace2d_retention_deleted_rejects", Type::counter, "Rejected lines (rejects rows) retention deleted.");
  out.value(static_cast<double>(deleted.rejects));
  out.family("trace2d_database_used_bytes", Type::gauge,
             "Bytes of the database's pages in use (its file less its free pages): what retention.max_db_bytes "
             "bounds; the file shrinks to it only as free pages are given back. Read every status.interval_ms.");
  out.value(static_cast<double>(writer.used_bytes()));
  out.family("trace2d_database_bytes", Type::gauge, "Size of the database file and of its write-ahead log.");
  if (const auto bytes = file_bytes(f.db_path)) {
    out.value({{"file", "db"}}, *bytes);
  }
  if (const auto bytes = file_bytes(f.db_path + "-wal")) {
    out.value({{"file", "wal"}}, *bytes);
  }

  out.family("trace2d_otlp_export_enabled", Type::gauge, "1 when finished process trees are exported over OTLP.");
  out.value(f.export_enabled ? 1 : 0);
  for (const metrics::FigureSource* component : f.components) {
    component->write_figures(out);
  }
  return std::move(out).finish();
}

}  // namespace trace2d::app
