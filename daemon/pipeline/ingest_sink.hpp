#pragma once
// What sources see of the pipeline: hand over chunks of lines, and ask
// whether the memory bound is reached.

#include <atomic>
#include <cstdint>

#include "daemon/pipeline/ingest_chunk.hpp"
#include "daemon/pipeline/memory_budget.hpp"
#include "daemon/pipeline/work_queue.hpp"

namespace trace2d::pipeline {

struct SourceCounters {
  std::atomic<std::uint64_t> channels_opened{0};
  std::atomic<std::uint64_t> channels_open{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> lines{0};
  std::atomic<std::uint64_t> dropped_lines{0};  // read, then dropped at the memory bound
  std::atomic<std::uint64_t> dropped_bytes{0};
};

class IngestSink {
 public:
  IngestSink(WorkQueue<IngestChunk>& queue, MemoryBudget& budget) : m_queue(queue), m_budget(budget) {}

  void submit(IngestChunk&& chunk) {
    m_budget.charge(chunk.memory_bytes());
    m_queue.push(std::move(chunk));
  }
  [[nodiscard]] bool over_budget() const { return m_budget.exhausted(); }
  [[nodiscard]] std::uint64_t next_channel_id() { return m_next_channel.fetch_add(1) + 1; }
  [[nodiscard]] SourceCounters& counters() { return m_counters; }

 private:
  WorkQueue<IngestChunk>& m_queue;
  MemoryBudget& m_budget;
  std::atomic<std::uint64_t> m_next_channel{0};
  SourceCounters m_counters;
};

}  // namespace trace2d::pipeline
