#pragma once
// What sources see of the pipeline: hand over chunks of lines, and ask
// whether the memory bound is reached.

#include <algorithm>
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
    charge_senders(chunk);
    // A finished trace file waits for its commit to be removed, and git may
    // be waiting for room in its directory (GIT_TRACE2_MAX_FILES). A channel
    // that ended (or whose writer exited) sends nothing more to gather with:
    // its process's last lines are what a user asks about right after git
    // returns, so they go on at once.
    const bool urgent = chunk.end_of_channel || chunk.writer_exited ||
                        (chunk.progress && (chunk.progress->finished || chunk.progress->remove_after_commit));
    m_queue.push(std::move(chunk), urgent);
  }
  [[nodiscard]] bool over_budget() const { return m_budget.exhausted(); }
  // `uid` holds its share of the bound (MemoryBudget::over_share): its
  // reader holds off or drops, while other uids read on.
  [[nodiscard]] bool over_share(std::int64_t uid) const { return m_budget.over_share(uid); }
  [[nodiscard]] bool one_uid_holds_it_all() const { return m_budget.one_uid_holds_it_all(); }
  // Memory a source holds outside chunks (unfinished lines), counted in
  // the same bound and in its sender's share.
  void hold(std::size_t bytes, std::int64_t uid) { m_budget.charge(bytes, uid); }
  void release(std::size_t bytes, std::int64_t uid) { m_budget.release(bytes, uid); }
  // Past this share of the bound: for sources that can wait without harm
  // (trace files), so that they leave the rest to sockets, whose writers
  // cannot wait.
  [[nodiscard]] bool over_budget_share(double share) const {
    return static_cast<double>(m_budget.used()) >= share * static_cast<double>(m_budget.limit());
  }
  [[nodiscard]] std::uint64_t next_channel_id() { return m_channel_ids.fetch_add(1) + 1; }
  [[nodiscard]] SourceCounters& counters() { return m_counters; }

 private:
  // A chunk's memory counts in its senders' shares: the whole of it for a
  // chunk of one sender (all but datagrams), else each line's bytes to its
  // sender and the rest to the first.
  void charge_senders(IngestChunk& chunk) {
    const std::size_t total = chunk.memory_bytes();
    const auto uid_of = [](const Origin& origin) { return origin.peer_uid.value_or(-1); };
    chunk.charges.clear();
    const std::int64_t first = chunk.origins.empty() ? -1 : uid_of(chunk.origins.front());
    bool one_sender = true;
    for (const Origin& origin : chunk.origins) {
      one_sender = one_sender && uid_of(origin) == first;
    }
    if (one_sender) {
      chunk.charges.emplace_back(first, total);
    } else {
      std::size_t others = 0;
      for (const IngestChunk::Line& line : chunk.lines) {
        const std::int64_t uid = uid_of(chunk.origin_of(line));
        if (uid == first) {
          continue;
        }
        others += line.size;
        if (chunk.charges.empty() || chunk.charges.back().first != uid) {
          chunk.charges.emplace_back(uid, 0);
        }
        chunk.charges.back().second += line.size;
      }
      chunk.charges.emplace_back(first, total - std::min(total, others));
    }
    for (const auto& [uid, bytes] : chunk.charges) {
      m_budget.charge(bytes, uid);
    }
  }

  WorkQueue<IngestChunk>& m_queue;
  MemoryBudget& m_budget;
  std::atomic<std::uint64_t>& m_channel_ids;
  SourceCounters m_counters;
};

}  // namespace trace2d::ingest
