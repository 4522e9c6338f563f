#pragma once
// The pipeline thread: parses the lines readers hand over, stitches them into
// sessions, encodes rows, and passes batches to the store writer. It never
// touches a socket, so however slow it is, readers keep draining.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "daemon/pipeline/ingest_chunk.hpp"
#include "daemon/pipeline/memory_budget.hpp"
#include "daemon/pipeline/work_queue.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "daemon/store/event_encoder.hpp"
#include "daemon/store/write_batch.hpp"
#include "proto/parser.hpp"

namespace trace2d::pipeline {

struct IngestCounters {
  std::atomic<std::uint64_t> lines{0};
  std::atomic<std::uint64_t> events{0};
  std::atomic<std::uint64_t> rejects{0};
  std::atomic<std::uint64_t> repaired_utf8{0};
};

class IngestWorker {
 public:
  struct Options {
    std::size_t max_line_bytes = 4608 * 1024;  // for the "line too long" reason
    std::size_t batch_rows = 8192;             // hand a batch on at this many rows...
    std::size_t batch_bytes = 4 * 1024 * 1024;  // ...or this much text
    std::chrono::milliseconds tick{200};       // housekeeping when idle
  };

  IngestWorker(WorkQueue<IngestChunk>& input, WorkQueue<store::WriteBatch>& output,
               MemoryBudget& budget, stitch::Stitcher& stitcher, store::EventEncoder& encoder,
               std::function<std::uint64_t()> committed_batch, Options options);

  // The thread body: returns once the input is closed and drained, after
  // handing on the last batch and closing the output.
  void run();

  [[nodiscard]] const IngestCounters& counters() const { return m_counters; }

 private:
  void process(const IngestChunk& chunk);
  void reject(const IngestChunk& chunk, std::string_view reason, std::string_view raw,
              std::uint64_t size);
  void hand_on();

  WorkQueue<IngestChunk>& m_input;
  WorkQueue<store::WriteBatch>& m_output;
  MemoryBudget& m_budget;
  stitch::Stitcher& m_stitcher;
  store::EventEncoder& m_encoder;
  std::function<std::uint64_t()> m_committed_batch;
  Options m_options;
  proto::Parser m_parser;
  proto::Event m_event;
  store::WriteBatch m_batch;
  std::uint64_t m_next_batch_number = 1;
  std::string m_reason;
  IngestCounters m_counters;
};

}  // namespace trace2d::pipeline
