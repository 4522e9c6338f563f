#include "daemon/store/store_consumer.hpp"

#include <algorithm>
#include <limits>

namespace trace2d::store {
namespace {

constexpr std::size_t k_reject_raw_bytes = 64 * 1024;  // of a rejected line, kept

}  // namespace

StoreConsumer::StoreConsumer(EventEncoder& encoder, ingest::WorkQueue<WriteBatch>& output,
                             ingest::MemoryBudget& budget, Options options)
    : m_encoder(encoder), m_output(output), m_budget(budget), m_options(options) {}

void StoreConsumer::saw_input_of(std::int64_t received_us) {
  if (m_batch.oldest_received_us == 0 || received_us < m_batch.oldest_received_us) {
    m_batch.oldest_received_us = received_us;
  }
}

void StoreConsumer::on_event(const stitch::StitchedEvent& stitched) {
  saw_input_of(stitched.received_us);
  m_encoder.encode(stitched.event, stitched.original, stitched.placement, m_batch, stitched.origin.peer_uid);
  count_for(stitched.origin.peer_uid.value_or(-1), stitched.original.size() + sizeof(EventRow));
}

void StoreConsumer::count_for(std::int64_t uid, std::size_t bytes) {
  if (m_batch.charged_uids.empty() || uid != m_last_uid) {
    const auto [entry, inserted] = m_uid_entry.try_emplace(uid, m_batch.charged_uids.size());
    if (inserted) {
      m_batch.charged_uids.emplace_back(uid, 0);
    }
    m_last_uid = uid;
    m_last_entry = entry->second;
  }
  m_batch.charged_uids[m_last_entry].second += bytes;
}

void StoreConsumer::on_reject(const stitch::RejectedInput& reject) {
  saw_input_of(reject.received_us);
  RejectRow row;
  row.received_us = reject.received_us;
  row.source = reject.source;
  row.peer_pid = reject.peer_pid;
  row.peer_uid = reject.peer_uid;
  row.reason = m_batch.add_text(reject.reason);
  const std::string_view raw = reject.raw.substr(0, k_reject_raw_bytes);
  row.raw = m_batch.add_text(raw);
  row.size = reject.size;
  m_batch.rejects.push_back(row);
  // A reject row is its sender's as an event is: uncharged, a flood of
  // lines trace2d refuses (not JSON, another user's SID) was held without
  // bound while the store caught up, and never paused its sender.
  count_for(reject.peer_uid.value_or(-1), reject.reason.size() + raw.size() + sizeof(RejectRow));
}

void StoreConsumer::on_file_progress(const ingest::IngestChunk::FileProgress& progress, std::int64_t received_us) {
  saw_input_of(received_us);
  FileOffsetRow row;
  row.key = m_batch.add_text(progress.key);
  row.path = m_batch.add_text(progress.path);
  row.offset = progress.offset;
  row.finished = progress.finished;
  row.forget = progress.forget;
  m_batch.file_offsets.push_back(row);
  if (progress.remove_after_commit) {
    // A refused file is never read, so it goes even if its git wrote on
    // after the refusal (one every user may write is refused as it appears).
    m_batch.remove_after_commit.push_back(
        {progress.path, progress.refused ? std::numeric_limits<std::uint64_t>::max() : progress.offset});
  }
}

void StoreConsumer::on_uid_counts(std::int64_t uid, std::uint64_t lines, std::uint64_t dropped) {
  m_batch.uid_stats.push_back(UidStatRow{uid, lines, dropped});
}

void StoreConsumer::on_changes(const stitch::StitchChanges& changes, std::uint64_t /*number*/) {
  m_encoder.encode(changes, m_batch);
}

bool StoreConsumer::hand_on(std::uint64_t number) {
  if (m_batch.empty()) {
    return false;
  }
  m_batch.number = number;
  // Each sender's events and rejects count in its share of the memory bound until
  // committed (a flood parked here fills only its own share); the rest of
  // the batch counts in the total.
  const std::size_t total = m_batch.memory_bytes();
  std::size_t left = total;
  for (auto& [uid, bytes] : m_batch.charged_uids) {
    bytes = std::min(bytes, left);
    left -= bytes;
    m_budget.charge(bytes, uid);
  }
  m_budget.charge(left);
  m_output.push(std::move(m_batch));
  m_batch = WriteBatch();
  m_uid_entry.clear();
  return true;
}

bool StoreConsumer::wants_hand_on() const {
  return m_batch.events.size() + m_batch.rejects.size() >= m_options.batch_rows ||
         m_batch.memory_bytes() >= m_options.batch_bytes;
}

void StoreConsumer::close() { m_output.close(); }

}  // namespace trace2d::store
