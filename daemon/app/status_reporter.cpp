#include "daemon/app/status_reporter.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "daemon/app/backend.hpp"
#include "proto/timestamp.hpp"
#include "trace2d/version.hpp"

namespace trace2d::app {
namespace {

std::optional<std::int64_t> file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(st.st_size);
}

}  // namespace

StatusReporter::StatusReporter(std::string db_path, std::int64_t started_us)
    : m_db_path(std::move(db_path)), m_started_us(started_us) {}

void StatusReporter::attach(Backend& backend) {
  std::lock_guard lock(m_mutex);
  m_backend = &backend;
}

void StatusReporter::add_source(Source source) {
  std::lock_guard lock(m_mutex);
  m_sources.push_back(std::move(source));
}

std::vector<StatusReporter::Source> StatusReporter::sources() {
  std::lock_guard lock(m_mutex);
  return m_sources;
}

void StatusReporter::write(db::Database& db) {
  std::lock_guard lock(m_mutex);
  if (m_backend == nullptr) {
    return;
  }
  const std::string now = proto::format_utc_timestamp(proto::unix_now_us());
  const store::CommitLatency latency = m_backend->writer().commit_latency();
  db::Statement status = db.prepare(
      "INSERT OR REPLACE INTO daemon_status (id, pid, version, started_at, updated_at, queue_bytes,"
      " queue_peak_bytes, queue_limit_bytes, events_committed, failed_commits, commit_latency_p50_ms,"
      " commit_latency_p99_ms, commit_latency_max_ms, db_bytes, wal_bytes, database_recreated, live_bytes,"
      " values_cut, retention_sessions_deleted, retention_events_deleted, retention_rejects_deleted, db_used_bytes)"
      " VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  status.bind_int(1, ::getpid());
  status.bind_text(2, k_version);
  status.bind_text(3, proto::format_utc_timestamp(m_started_us));
  status.bind_text(4, now);
  status.bind_int(5, static_cast<std::int64_t>(m_backend->budget().used()));
  status.bind_int(6, static_cast<std::int64_t>(m_backend->budget().peak()));
  status.bind_int(7, static_cast<std::int64_t>(m_backend->budget().limit()));
  status.bind_int(8, static_cast<std::int64_t>(m_backend->writer().committed_events()));
  status.bind_int(9, static_cast<std::int64_t>(m_backend->writer().failed_commits()));
  if (latency.samples > 0) {
    status.bind_double(10, latency.p50_ms);
    status.bind_double(11, latency.p99_ms);
    status.bind_double(12, latency.max_ms);
  } else {
    status.bind_null(10);
    status.bind_null(11);
    status.bind_null(12);
  }
  status.bind(13, file_size(m_db_path));
  status.bind(14, file_size(m_db_path + "-wal"));
  status.bind_int(15, static_cast<std::int64_t>(m_backend->writer().database_recreated()));
  status.bind_int(16, static_cast<std::int64_t>(m_backend->stitcher().live_bytes_total()));
  status.bind_int(17, static_cast<std::int64_t>(m_backend->stitcher().values_cut()));
  const store::StoreWriter::RetentionDeleted deleted = m_backend->writer().retention_deleted();
  status.bind_int(18, static_cast<std::int64_t>(deleted.sessions));
  status.bind_int(19, static_cast<std::int64_t>(deleted.events));
  status.bind_int(20, static_cast<std::int64_t>(deleted.rejects));
  status.bind_int(21, static_cast<std::int64_t>(m_backend->writer().used_bytes()));
  status.run();

  db::Statement stats = db.prepare(
      "INSERT OR REPLACE INTO source_stats (source, address, channels_opened, channels_open, bytes,"
      " lines, events, rejects, dropped_lines, kernel_drops, too_many_files, updated_at)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  auto& counters = m_backend->worker().counters();
  for (const Source& source : m_sources) {
    const auto& sink = source.sink->counters();
    const auto& parsed = counters.of(source.kind);
    stats.bind_text(1, ingest::to_string(source.kind));
    stats.bind_text(2, source.address);
    stats.bind_int(3, static_cast<std::int64_t>(sink.channels_opened.load()));
    stats.bind_int(4, static_cast<std::int64_t>(sink.channels_open.load()));
    stats.bind_int(5, static_cast<std::int64_t>(sink.bytes.load()));
    // Every line read, those dropped at the memory bound included; the
    // dropped ones (there and at the rate valve) as the pipeline counted
    // them, the same lines as uid_stats.dropped.
    stats.bind_int(6, static_cast<std::int64_t>(sink.lines.load() + sink.dropped_lines.load()));
    stats.bind_int(7, static_cast<std::int64_t>(parsed.events.load()));
    stats.bind_int(8, static_cast<std::int64_t>(parsed.rejects.load()));
    stats.bind_int(9, static_cast<std::int64_t>(parsed.dropped.load()));
    stats.bind_int(10, static_cast<std::int64_t>(source.kernel_drops ? source.kernel_drops() : 0));
    stats.bind_int(11, static_cast<std::int64_t>(
                           std::max<std::uint64_t>(parsed.too_many_files.load(),
                                                   source.too_many_files ? source.too_many_files() : 0)));
    stats.bind_text(12, now);
    stats.run();
  }
}

}  // namespace trace2d::app
