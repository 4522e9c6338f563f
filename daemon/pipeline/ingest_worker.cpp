#include "daemon/pipeline/ingest_worker.hpp"

#include <fmt/format.h>

#include <iterator>

#include "daemon/ingest/lost_lines.hpp"
#include "proto/redact.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::pipeline {

IngestWorker::IngestWorker(ingest::WorkQueue<ingest::IngestChunk>& input, ingest::MemoryBudget& budget,
                           stitch::Stitcher& stitcher, std::vector<stitch::StitchedConsumer*> consumers,
                           std::function<std::uint64_t()> committed_batch, Options options)
    : m_input(input),
      m_budget(budget),
      m_stitcher(stitcher),
      m_consumers(std::move(consumers)),
      m_committed_batch(std::move(committed_batch)),
      m_options(options),
      m_idle_timeout_ms(options.idle_timeout.count()),
      m_limiter(options.per_uid_lines_per_second) {}

void IngestWorker::reject(const ingest::IngestChunk& chunk, const ingest::Origin& origin,
                          std::string_view reason, std::string_view raw, std::uint64_t size) {
  const stitch::RejectedInput rejected{origin.kind, origin.peer_pid, origin.peer_uid, chunk.received_us,
                                       reason,      raw,             size};
  for (stitch::StitchedConsumer* consumer : m_consumers) {
    consumer->on_reject(rejected);
  }
  m_counters.of(origin.kind).rejects.fetch_add(1, std::memory_order_relaxed);
}

std::size_t IngestWorker::process(const ingest::IngestChunk& chunk, std::size_t first_line, std::size_t max_lines) {
  // A file's lines stay in one batch with its position, so they are taken
  // in one turn.
  const std::size_t end =
      chunk.progress ? chunk.lines.size() : std::min(chunk.lines.size(), first_line + max_lines);
  for (std::size_t index = first_line; index < end; ++index) {
    const ingest::IngestChunk::Line& line = chunk.lines[index];
    const ingest::Origin& origin = chunk.origin_of(line);
    auto& counters = m_counters.of(origin.kind);
    counters.lines.fetch_add(1, std::memory_order_relaxed);
    std::string_view text = chunk.line_text(line);
    if (!m_limiter.admit(origin.peer_uid, chunk.received_us,
                         [this](std::int64_t uid) { return m_budget.over_share(uid); })) {
      counters.dropped.fetch_add(1, std::memory_order_relaxed);
      lost(ingest::sid_in_head(text), origin, 1, ingest::LossReason::rate_valve, chunk.received_us);
      continue;  // counted per uid (uid_stats) and on its session
    }
    std::size_t readable_after = chunk.readable_after(line);
    if (m_options.redact_url_credentials && proto::redact_url_credentials(text, m_redacted)) {
      text = m_redacted;
      readable_after = 0;  // the parser pads a copy
    }
    if (line.full_size > m_options.max_line_bytes) {
      m_reason = fmt::format("line too long: {} bytes (limit {})", line.full_size,
                             m_options.max_line_bytes);
      reject(chunk, origin, m_reason, text, line.full_size);
      m_stitcher.note_lost(ingest::sid_in_head(text), origin, 1, ingest::LossReason::too_long, chunk.received_us);
      continue;
    }
    if (line.full_size > line.size) {
      m_reason = fmt::format(
          "line cut short after {} of its {} bytes: its sender held more than its share of memory in "
          "unfinished lines",
          line.size, line.full_size);
      reject(chunk, origin, m_reason, text, line.full_size);
      m_stitcher.note_lost(ingest::sid_in_head(text), origin, 1, ingest::LossReason::cut_short, chunk.received_us);
      continue;
    }
    const proto::ParseOutcome outcome = m_parser.parse(text, readable_after, m_event);
    if (!outcome) {
      reject(chunk, origin, outcome.reject_reason, text, line.full_size);
      continue;
    }
    if (m_event.utf8_repaired) {
      m_counters.repaired_utf8.fetch_add(1, std::memory_order_relaxed);
    }
    if (m_event.kind == proto::EventKind::too_many_files) {
      counters.too_many_files.fetch_add(1, std::memory_order_relaxed);
    }
    const std::optional<stitch::EventPlacement> placement = m_stitcher.place(m_event, origin, chunk.received_us);
    if (!placement) {
      reject(chunk, origin, m_stitcher.refusal(), text, line.full_size);
      continue;
    }
    counters.events.fetch_add(1, std::memory_order_relaxed);
    if (placement->withheld) {
      continue;  // counted in the stitcher's WithheldRecords, written by the store
    }
    const stitch::StitchedEvent stitched{m_event, text, *placement, origin, chunk.received_us};
    for (stitch::StitchedConsumer* consumer : m_consumers) {
      consumer->on_event(stitched);
    }
    // A file's lines stay in one hand-over with its position: committed
    // together or not at all, so a restart never reads a line twice.
    if (!chunk.progress && consumers_want_hand_on()) {
      hand_on();
    }
  }
  if (end < chunk.lines.size()) {
    return end;
  }
  if (!chunk.dropped.empty()) {
    lost_at_memory_bound(chunk);
  }
  if (!chunk.refused.empty()) {
    reject(chunk, chunk.channel_origin(), chunk.refused, {}, chunk.refused_bytes);
  }
  if (chunk.progress) {
    for (stitch::StitchedConsumer* consumer : m_consumers) {
      consumer->on_file_progress(*chunk.progress, chunk.received_us);
    }
  }
  if (chunk.writer_exited) {
    m_stitcher.writer_exited(chunk.channel_origin().channel);
  }
  if (chunk.end_of_channel) {
    m_stitcher.end_of_channel(chunk.channel_origin().channel);
    for (stitch::StitchedConsumer* consumer : m_consumers) {
      consumer->on_channel_end();
    }
  }
  return end;
}

// Lines dropped before parsing: counted on the session they belong to
// when there is one their sender owns, else for their uid (a reject row
// at the next report names it).
void IngestWorker::lost(std::string_view sid, const ingest::Origin& origin, std::uint64_t lines,
                        ingest::LossReason reason, std::int64_t received_us) {
  if (!m_stitcher.note_lost(sid, origin, lines, reason, received_us)) {
    Unattributed& unattributed = m_unattributed[origin.peer_uid.value_or(UidRateLimiter::k_unknown_uid)];
    unattributed.source = origin.kind;
    unattributed.lines[static_cast<std::size_t>(reason)] += lines;
  }
}

// Read, then dropped at the memory bound (its uid's share) by the reader:
// counted per uid with the rate valve's drops, and on each session the
// reader named (ingest_chunk.hpp, drop_line()).
void IngestWorker::lost_at_memory_bound(const ingest::IngestChunk& chunk) {
  for (const ingest::IngestChunk::Dropped& dropped : chunk.dropped) {
    const ingest::Origin& origin = chunk.origins[dropped.origin];
    m_limiter.count_dropped(origin.peer_uid, dropped.lines);
    auto& counters = m_counters.of(origin.kind);
    counters.lines.fetch_add(dropped.lines, std::memory_order_relaxed);
    counters.dropped.fetch_add(dropped.lines, std::memory_order_relaxed);
    if (dropped.anonymous) {
      Unattributed& unattributed = m_unattributed[origin.peer_uid.value_or(UidRateLimiter::k_unknown_uid)];
      unattributed.source = origin.kind;
      unattributed.lines[static_cast<std::size_t>(ingest::LossReason::memory_bound)] += dropped.lines;
      continue;
    }
    lost(dropped.sid, origin, dropped.lines, ingest::LossReason::memory_bound, chunk.received_us);
  }
}

// Whose turn a chunk waits for: its sender's uid. (The datagram receiver
// hands each sender uid's datagrams over in chunks of their own.)
std::int64_t IngestWorker::turn_key(const ingest::IngestChunk& chunk) {
  if (chunk.origins.empty()) {
    return UidRateLimiter::k_unknown_uid;
  }
  return chunk.channel_origin().peer_uid.value_or(UidRateLimiter::k_unknown_uid);
}

// Every local user can send, and a flood must delay only its sender: the
// chunks taken from the queue wait per uid, and each uid in turn gets a
// share of lines, so another uid's chunk is parsed after at most one share
// of each flood, not after the whole of it. Within a uid, chunks keep
// their order (a channel's lines must).
bool IngestWorker::take_turns() {
  const auto deadline = std::chrono::steady_clock::now() + m_options.gather;
  while (!m_pending.empty()) {
    for (auto it = m_pending.begin(); it != m_pending.end();) {
      PendingChunk& pending = it->second.front();
      pending.next_line = process(pending.chunk, pending.next_line, m_options.turn_lines);
      if (pending.next_line >= pending.chunk.lines.size()) {
        for (const auto& [uid, bytes] : pending.chunk.charges) {
          m_budget.release(bytes, uid);
        }
        it->second.pop_front();
      }
      it = it->second.empty() ? m_pending.erase(it) : std::next(it);
    }
    if (!m_input.empty() || std::chrono::steady_clock::now() >= deadline) {
      return !m_pending.empty();  // newcomers join the turns
    }
  }
  return false;
}

void IngestWorker::report_uids(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - m_last_uid_report < m_options.uid_stats_interval) {
    return;
  }
  m_last_uid_report = now;
  // Lines dropped whose session could not be named: one row per uid and
  // report, naming the uid that sent them.
  for (auto& [uid, unattributed] : m_unattributed) {
    m_reason.clear();
    std::uint64_t total = 0;
    for (std::size_t reason = 0; reason < ingest::k_loss_reasons; ++reason) {
      const std::uint64_t lines = unattributed.lines[reason];
      if (lines == 0) {
        continue;
      }
      total += lines;
      fmt::format_to(std::back_inserter(m_reason), "{}{} to {}", m_reason.empty() ? "" : ", ", lines,
                     ingest::to_string(static_cast<ingest::LossReason>(reason)));
    }
    m_reason = fmt::format("{} lines of uid {} lost, of no session it owns that they named ({}; rate valve {} "
                           "lines/s, limits.per_uid_lines_per_second)",
                           total, uid, m_reason, m_options.per_uid_lines_per_second);
    const std::optional<std::int64_t> peer_uid =
        uid == UidRateLimiter::k_unknown_uid ? std::nullopt : std::optional<std::int64_t>(uid);
    const stitch::RejectedInput rejected{unattributed.source, std::nullopt, peer_uid, proto::unix_now_us(),
                                         m_reason,            {},           0};
    for (stitch::StitchedConsumer* consumer : m_consumers) {
      consumer->on_reject(rejected);
    }
  }
  m_unattributed.clear();
  for (const auto& [uid, counts] : m_limiter.counts()) {
    UidRateLimiter::Counts& reported = m_reported[uid];
    if (counts.lines == reported.lines) {
      continue;
    }
    for (stitch::StitchedConsumer* consumer : m_consumers) {
      consumer->on_uid_counts(uid, counts.lines, counts.dropped);
    }
    reported = counts;
  }
}

bool IngestWorker::consumers_want_hand_on() const {
  for (const stitch::StitchedConsumer* consumer : m_consumers) {
    if (consumer->wants_hand_on()) {
      return true;
    }
  }
  return false;
}

void IngestWorker::hand_on() {
  const std::uint64_t number = m_next_batch_number;
  // A fresh one each time: after a burst, kept capacity would hold
  // megabytes between hand-overs.
  stitch::StitchChanges changes;
  m_stitcher.collect_changes(changes, number);
  bool handed = false;
  for (stitch::StitchedConsumer* consumer : m_consumers) {
    consumer->on_changes(changes, number);
    handed = consumer->hand_on(number) || handed;
  }
  if (handed) {
    ++m_next_batch_number;
  }
}

void IngestWorker::set_storage_drop(std::vector<std::string> patterns) {
  const std::lock_guard lock(m_settings_mutex);
  m_new_storage_drop = std::move(patterns);
  m_settings_changed.store(true);
}

void IngestWorker::run() {
  std::vector<ingest::IngestChunk> chunks;
  auto last_tick = std::chrono::steady_clock::now();
  bool open = true;
  bool trickling = false;
  bool behind = false;  // chunks still wait their turn
  while (open || behind) {
    chunks.clear();
    // Under a trickle (git writes one event per write(); readers hand over
    // what each read found), let chunks gather rather than wake for each.
    // When idle, wake for the first; when behind, never wait.
    if (behind) {
      open = open && m_input.pop_all(chunks, std::chrono::milliseconds(0));
    } else {
      const bool holds_nothing = m_pending.empty() && m_stitcher.live_sessions() == 0;
      open = trickling ? m_input.pop_all(chunks, m_options.gather, m_options.gather_chunks)
                       : m_input.pop_all(chunks, holds_nothing ? m_options.idle_tick : m_options.tick);
      trickling = !chunks.empty() && chunks.size() < m_options.gather_chunks;
    }
    // After the wait: chunks read after a reload's change are placed by it.
    if (m_settings_changed.exchange(false)) {
      const std::lock_guard lock(m_settings_mutex);
      m_stitcher.set_storage_drop(m_new_storage_drop);
    }
    for (ingest::IngestChunk& chunk : chunks) {
      std::deque<PendingChunk>& turn = m_pending[turn_key(chunk)];
      turn.push_back(PendingChunk{std::move(chunk), 0});
    }
    behind = take_turns();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_tick >= m_options.tick) {
      last_tick = now;
      const std::int64_t now_us = proto::unix_now_us();
      m_stitcher.expire_idle(now_us, std::chrono::milliseconds(m_idle_timeout_ms.load()));
      m_stitcher.evict(m_committed_batch(), now_us);
      report_uids(false);
      hand_on();
    }
    // Between turns no file's chunk is half done: a full batch goes on even
    // while chunks still wait (a file's lines never hand it on themselves).
    if (!behind || consumers_want_hand_on()) {
      hand_on();
    }
  }
  report_uids(true);
  hand_on();
  for (stitch::StitchedConsumer* consumer : m_consumers) {
    consumer->close();
  }
}

}  // namespace trace2d::pipeline
