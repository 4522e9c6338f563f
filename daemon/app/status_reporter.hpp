#pragma once
// Publishes the daemon's counters into `daemon_status` and `source_stats`
// (read by `trace2ctl status`). Runs on the writer thread, inside its
// transactions, every few seconds; everything it reads is atomic.

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/ingest/ingest_sink.hpp"
#include "daemon/ingest/origin.hpp"
#include "db/sqlite.hpp"

namespace trace2d::app {

class Backend;

class StatusReporter {
 public:
  StatusReporter(std::string db_path, std::int64_t started_us);

  void attach(Backend& backend);
  struct Source {
    ingest::SourceKind kind;
    std::string address;  // socket path, directories
    ingest::IngestSink* sink = nullptr;
    std::function<std::uint64_t()> kernel_drops;    // dgram
    std::function<std::uint64_t()> too_many_files;  // dir: sentinels seen
  };
  void add_source(Source source);

  // The writer's status hook.
  void write(db::Database& db);

  // The sources added so far (for /metrics), and when the daemon started.
  [[nodiscard]] std::vector<Source> sources();
  [[nodiscard]] std::int64_t started_us() const { return m_started_us; }

 private:
  std::string m_db_path;
  std::int64_t m_started_us;
  Backend* m_backend = nullptr;
  std::mutex m_mutex;
  std::vector<Source> m_sources;
};

}  // namespace trace2d::app
