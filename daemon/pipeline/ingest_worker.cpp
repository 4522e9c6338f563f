#include "daemon/pipeline/ingest_worker.hpp"

#include <fmt/format.h>

#include "proto/timestamp.hpp"

namespace trace2d::pipeline {
namespace {

constexpr std::size_t k_reject_raw_bytes = 64 * 1024;  // of a rejected line, kept

}  // namespace

IngestWorker::IngestWorker(WorkQueue<IngestChunk>& input, WorkQueue<store::WriteBatch>& output,
                           MemoryBudget& budget, stitch::Stitcher& stitcher,
                           store::EventEncoder& encoder,
                           std::function<std::uint64_t()> committed_batch, Options options)
    : m_input(input),
      m_output(output),
      m_budget(budget),
      m_stitcher(stitcher),
      m_encoder(encoder),
      m_committed_batch(std::move(committed_batch)),
      m_options(options) {}

void IngestWorker::reject(const IngestChunk& chunk, std::string_view reason, std::string_view raw,
                          std::uint64_t size) {
  store::RejectRow row;
  row.received_us = chunk.received_us;
  row.source = chunk.origin.kind;
  row.peer_pid = chunk.origin.peer_pid;
  row.peer_uid = chunk.origin.peer_uid;
  row.reason = m_batch.add_text(reason);
  row.raw = m_batch.add_text(raw.substr(0, k_reject_raw_bytes));
  row.size = size;
  m_batch.rejects.push_back(row);
  m_counters.rejects.fetch_add(1, std::memory_order_relaxed);
}

void IngestWorker::process(const IngestChunk& chunk) {
  for (const IngestChunk::Line& line : chunk.lines) {
    m_counters.lines.fetch_add(1, std::memory_order_relaxed);
    const std::string_view text = chunk.line_text(line);
    if (line.full_size > m_options.max_line_bytes) {
      m_reason = fmt::format("line too long: {} bytes (limit {})", line.full_size,
                             m_options.max_line_bytes);
      reject(chunk, m_reason, text, line.full_size);
      continue;
    }
    const proto::ParseOutcome outcome = m_parser.parse(text, chunk.readable_after(line), m_event);
    if (!outcome) {
      reject(chunk, outcome.reject_reason, text, line.full_size);
      continue;
    }
    if (m_event.utf8_repaired) {
      m_counters.repaired_utf8.fetch_add(1, std::memory_order_relaxed);
    }
    const stitch::Placement placement = m_stitcher.place(m_event, chunk.origin, chunk.received_us);
    m_encoder.encode(m_event, text, placement, m_batch);
    m_counters.events.fetch_add(1, std::memory_order_relaxed);
    if (m_batch.events.size() >= m_options.batch_rows) {
      hand_on();
    }
  }
  if (chunk.end_of_channel) {
    m_stitcher.end_of_channel(chunk.origin.channel);
  }
}

void IngestWorker::hand_on() {
  const std::uint64_t number = m_next_batch_number;
  m_stitcher.collect_changes(m_batch.sessions, number);
  if (m_batch.empty()) {
    return;
  }
  ++m_next_batch_number;
  m_batch.number = number;
  m_budget.charge(m_batch.memory_bytes());
  m_output.push(std::move(m_batch));
  m_batch = store::WriteBatch();
}

void IngestWorker::run() {
  std::vector<IngestChunk> chunks;
  auto last_tick = std::chrono::steady_clock::now();
  bool open = true;
  while (open) {
    chunks.clear();
    open = m_input.pop_all(chunks, m_options.tick);
    for (const IngestChunk& chunk : chunks) {
      process(chunk);
      m_budget.release(chunk.memory_bytes());
    }
    hand_on();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_tick >= m_options.tick) {
      last_tick = now;
      m_stitcher.evict(m_committed_batch(), proto::unix_now_us());
    }
  }
  hand_on();
  m_output.close();
}

}  // namespace trace2d::pipeline
