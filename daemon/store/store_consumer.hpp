#pragma once
// The store as a consumer of stitched output: encodes what the ingest worker
// passes on into rows of a WriteBatch, and hands full batches to the store
// writer's queue, charged to the memory bound until they are committed.

#include <cstdint>
#include <string>
#include <unordered_map>

#include "daemon/ingest/memory_budget.hpp"
#include "daemon/ingest/work_queue.hpp"
#include "daemon/stitch/stitched_consumer.hpp"
#include "daemon/store/event_encoder.hpp"
#include "daemon/store/write_batch.hpp"

namespace trace2d::store {

class StoreConsumer final : public stitch::StitchedConsumer {
 public:
  struct Options {
    std::size_t batch_rows = 8192;              // a batch wants handing on at this many events...
    std::size_t batch_bytes = 4 * 1024 * 1024;  // ...or this much memory
  };

  StoreConsumer(EventEncoder& encoder, ingest::WorkQueue<WriteBatch>& output, ingest::MemoryBudget& budget,
                Options options);

  void on_event(const stitch::StitchedEvent& stitched) override;
  void on_reject(const stitch::RejectedInput& reject) override;
  void on_file_progress(const ingest::IngestChunk::FileProgress& progress, std::int64_t received_us) override;
  void on_channel_end() override { m_batch.ends_channel = true; }
  void on_uid_counts(std::int64_t uid, std::uint64_t lines, std::uint64_t dropped) override;
  void on_changes(const stitch::StitchChanges& changes, std::uint64_t number) override;
  bool hand_on(std::uint64_t number) override;
  [[nodiscard]] bool wants_hand_on() const override;
  void close() override;

 private:
  void saw_input_of(std::int64_t received_us);

  EventEncoder& m_encoder;
  ingest::WorkQueue<WriteBatch>& m_output;
  ingest::MemoryBudget& m_budget;
  Options m_options;
  WriteBatch m_batch;
  // The batch's bytes by sender, for the memory bound's shares: an entry
  // per uid in m_batch.charged_uids, found by hash when the sender changes
  // (consecutive events are mostly one sender's), never by a scan.
  void count_for(std::int64_t uid, std::size_t bytes);
  std::unordered_map<std::int64_t, std::size_t> m_uid_entry;
  std::int64_t m_last_uid = 0;
  std::size_t m_last_entry = 0;
};

}  // namespace trace2d::store
