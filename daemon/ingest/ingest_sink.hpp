#pragma once
// What sources see of the pipeline: hand over chunks of lines, and ask
// whether the memory bound is reached.

#include <atomic>
#include <cstdint>

#include "daemon/ingest/ingest_chunk.hpp"
#include "daemon/ingest/memory_budget.hpp"
#include "daemon/ingest/work_queue.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ingest {

struct SourceCounters {
  std::atomic<std::uint64_t> channels_opened{0};
  std::atomic<std::uint64_t> channels_open{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> lines{0};
  std::atomic<std::uint64_t> dropped_lines{0};  // read, then dropped at the memory bound
  std::atomic<std::uint64_t> dropped_bytes{0};
  // Closed by trace2d: over a per-uid bound, or silent (stream only).
  std::atomic<std::uint64_t> channels_refused{0};
};

// One per source, so that each has its own counters; channel ids come from
// a counter all sources share, so that they never collide.
class IngestSink {
 public:
  IngestSink(WorkQueue<IngestChunk>& queue, MemoryBudget& budget, std::atomic<std::uint64_t>& channel_ids)
      : m_queue(queue), m_budget(budget), m_channel_ids(channel_ids) {}

  // Stamps the receive time, counts the lines, and adds the parser's
  // padding: every source hands chunks over the same way.
  void submit(IngestChunk&& chunk) {
    chunk.received_us = proto::unix_now_us();
    m_counters.lines.fetch_add(chunk.lines.size(), std::memory_order_relaxed);
    m_counters.dropped_lines.fetch_add(chunk.dropped_lines, std::memory_order_relaxed);
    m_counters.dropped_bytes.fetch_add(chunk.dropped_bytes, std::memory_order_relaxed);
    chunk.seal(proto::Parser::padding_bytes());
    m_budget.charge(chunk.memory_bytes());
    // A finished trace file waits for its commit to be removed, and git may
    // be waiting for room in its directory (GIT_TRACE2_MAX_FILES).
    const bool urgent = chunk.progress && (chunk.progress->finished || chunk.progress->remove_after_commit);
    m_queue.push(std::move(chunk), urgent);
  }
  [[nodiscard]] bool over_budget() const { return m_budget.exhausted(); }
  // Memory a source holds outside chunks (unfinished lines), counted in
  // the same bound.
  void hold(std::size_t bytes) { m_budget.charge(bytes); }
  void release(std::size_t bytes) { m_budget.release(bytes); }
  // Past this share of the bound: for sources that can wait without harm
  // (trace files), so that they leave the rest to sockets, whose writers
  // cannot wait.
  [[nodiscard]] bool over_budget_share(double share) const {
    return static_cast<double>(m_budget.used()) >= share * static_cast<double>(m_budget.limit());
  }
  [[nodiscard]] std::uint64_t next_channel_id() { return m_channel_ids.fetch_add(1) + 1; }
  [[nodiscard]] SourceCounters& counters() { return m_counters; }

 private:
  WorkQueue<IngestChunk>& m_queue;
  MemoryBudget& m_budget;
  std::atomic<std::uint64_t>& m_channel_ids;
  SourceCounters m_counters;
};

}  // namespace trace2d::ingest
