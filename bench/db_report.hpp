#pragma once
// What the benchmarks read back from trace2d's database once trace2d has
// stopped: loss counters, the storage cost per table and index, whether
// `events.json` gives back every sent line, and commit latencies.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/commit_poller.hpp"
#include "bench/support.hpp"

namespace trace2d::bench {

struct LossReport {
  std::int64_t stored = 0;    // event_store rows
  std::int64_t sessions = 0;  // sessions rows
  std::int64_t rejects = 0;
  std::int64_t dropped_lines = 0;  // source_stats: dropped at the memory bound
  std::int64_t kernel_drops = 0;   // source_stats: datagrams the kernel dropped
  std::int64_t queue_peak_bytes = 0;  // daemon_status: most held read but not committed
};
[[nodiscard]] LossReport read_loss(const std::string& db_path);

struct StorageReport {
  std::int64_t db_bytes = 0;  // page_count * page_size after a full checkpoint
  std::int64_t wal_bytes_before = 0;
  std::int64_t freelist_pages = 0;
  std::vector<std::pair<std::string, std::int64_t>> objects;  // dbstat: table or index, bytes
  std::int64_t json_checked = 0;
  std::int64_t json_mismatched = 0;
};
// Checkpoints the WAL (TRUNCATE) from a new connection, sizes the database
// and each of its tables and indexes, and compares `coalesce(raw, json)` of
// the `events` view with the lines sent: `json_samples` events spread over
// the payload, or every event when 0.
[[nodiscard]] StorageReport measure_storage(const std::string& db_path, const Payload& payload,
                                            std::int64_t json_samples);
void print_storage(const StorageReport& report, const Payload& payload);

struct LatencyReport {
  std::int64_t measured = 0;  // events with a `time`, seen committed
  std::int64_t unseen = 0;    // events with a `time` the poller never saw (should be 0)
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
  // Per second of sending: events, p50 and p99 (ms), to show how latency
  // evolves through the run.
  struct Second {
    std::int64_t events = 0;
    double p50_ms = 0;
    double p99_ms = 0;
  };
  std::vector<Second> seconds;
};
// Latency of every stored event that carries a `time`: from that time (set
// by the writer just before write()) to the poll that first saw it committed.
[[nodiscard]] LatencyReport measure_latency(const std::string& db_path, const CommitPoller& poller);

}  // namespace trace2d::bench
