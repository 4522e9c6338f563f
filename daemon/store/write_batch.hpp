#pragma once
// Rows ready for SQLite, produced on the pipeline thread and handed to the
// single store writer. Text lives in one arena per batch so a batch of
// thousands of rows costs a handful of allocations.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/ingest/origin.hpp"
#include "daemon/stitch/session_record.hpp"
#include "db/event_codec.hpp"

namespace trace2d::store {

struct TextRef {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  bool present = false;
};

struct EventRow {
  std::int64_t session = 0;
  std::int64_t seq = 0;
  std::int64_t type = 0;
  std::optional<std::int64_t> thread;
  std::optional<std::int64_t> time_us;  // relative to the session's time base
  std::optional<std::int64_t> file;
  std::optional<std::int64_t> line;
  // The members a remainder may begin with, when the encoder took them out
  // of `body` (db::take_leading_members).
  db::LeadingColumns leading;
  TextRef body;
  TextRef raw;
  // Not a column: what the `names` rows this event added take, charged to
  // its session with the event (store/row_cost.hpp).
  std::uint32_t names_bytes = 0;
};

struct NameRow {
  std::int64_t id = 0;
  TextRef text;
};

struct ProblemRow {
  std::int64_t session = 0;
  std::int64_t seq = 0;
  TextRef message;
};

struct RejectRow {
  std::int64_t received_us = 0;
  ingest::SourceKind source = ingest::SourceKind::stream;
  std::optional<std::int64_t> peer_pid;
  std::optional<std::int64_t> peer_uid;
  TextRef reason;
  TextRef raw;
  std::uint64_t size = 0;
};

// region_store: names interned, text in the batch's arena. A name without
// an id (its sender over its share of `names`) is kept as text instead.
struct RegionRow {
  std::int64_t session = 0;
  std::int64_t seq = 0;
  std::optional<std::int64_t> thread;
  std::optional<std::int64_t> nesting;
  std::optional<std::int64_t> category;
  std::optional<std::int64_t> label;
  TextRef thread_text;
  TextRef category_text;
  TextRef label_text;
  TextRef msg;
  std::optional<std::int64_t> repo;
  std::optional<double> t_start;
  std::optional<double> elapsed;
  std::optional<std::int64_t> parent_seq;
  std::optional<std::int64_t> leave_seq;
  std::uint32_t names_bytes = 0;  // as EventRow's
};

// Lines seen and dropped by the rate limit for one uid, since the daemon started.
struct UidStatRow {
  std::int64_t uid = 0;
  std::uint64_t lines = 0;
  std::uint64_t dropped = 0;
};

// A file source's position, committed with the events read up to it.
struct FileOffsetRow {
  TextRef key;
  TextRef path;
  std::uint64_t offset = 0;
  bool finished = false;
  bool forget = false;  // the file is gone: drop its row
};

class WriteBatch {
 public:
  TextRef add_text(std::string_view text) {
    TextRef ref{static_cast<std::uint32_t>(m_arena.size()), static_cast<std::uint32_t>(text.size()), true};
    m_arena.append(text);
    return ref;
  }
  [[nodiscard]] std::string_view text(TextRef ref) const {
    return ref.present ? std::string_view(m_arena).substr(ref.offset, ref.size) : std::string_view();
  }

  std::vector<NameRow> names;
  std::vector<EventRow> events;
  std::vector<ProblemRow> problems;
  std::vector<RejectRow> rejects;
  std::vector<stitch::SessionRecord> sessions;  // snapshots of sessions that changed
  std::vector<RegionRow> regions;
  std::vector<stitch::ChildRecord> children;  // merged into what is stored
  std::vector<FileOffsetRow> file_offsets;
  std::vector<UidStatRow> uid_stats;
  // Not rows: what of memory_bytes() the memory bound counts in each
  // sender's share (its events' and rejects' bytes, StoreConsumer::hand_on); the rest
  // counts in the total only. Released alike once committed.
  std::vector<std::pair<std::int64_t, std::size_t>> charged_uids;
  [[nodiscard]] std::size_t charged_to_uids() const {
    std::size_t sum = 0;
    for (const auto& [uid, bytes] : charged_uids) {
      sum += bytes;
    }
    return sum;
  }
  // Sessions the storage rule withholds: counted, and their rows (written
  // before their command was known) deleted after everything else.
  std::vector<stitch::WithheldRecord> withheld;
  // Finished trace files to delete once this batch is committed, with
  // the size they were finished at: one that has grown since is kept
  // (another git appended to it; the watcher reads it on).
  struct FinishedFile {
    std::string path;
    std::uint64_t size = 0;
  };
  std::vector<FinishedFile> remove_after_commit;
  // It holds the last lines of a connection (a process that has ended):
  // its user may ask about it the moment git returns.
  bool ends_channel = false;
  // When the oldest line in this batch was read, for the commit latency.
  std::int64_t oldest_received_us = 0;

  // Ordinal of this batch within the daemon run (1, 2, ...).
  std::uint64_t number = 0;

  [[nodiscard]] bool empty() const {
    return names.empty() && events.empty() && problems.empty() && rejects.empty() && sessions.empty() &&
           file_offsets.empty() && remove_after_commit.empty() && regions.empty() && children.empty() &&
           uid_stats.empty() && withheld.empty();
  }
  [[nodiscard]] std::size_t row_count() const {
    return names.size() + events.size() + problems.size() + rejects.size() + sessions.size() +
           file_offsets.size() + regions.size() + children.size() + withheld.size();
  }
  // Approximate heap bytes held, for the daemon's memory bound.
  [[nodiscard]] std::size_t memory_bytes() const {
    return m_arena.capacity() + events.capacity() * sizeof(EventRow) +
           names.capacity() * sizeof(NameRow) + problems.capacity() * sizeof(ProblemRow) +
           rejects.capacity() * sizeof(RejectRow) +
           sessions.capacity() * (sizeof(stitch::SessionRecord) + 128) +
           regions.capacity() * sizeof(RegionRow) + children.capacity() * (sizeof(stitch::ChildRecord) + 64) +
           withheld.capacity() * (sizeof(stitch::WithheldRecord) + 32);
  }

 private:
  std::string m_arena;
};

}  // namespace trace2d::store
