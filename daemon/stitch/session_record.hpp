#pragma once
// One process (one SID) as the `sessions` table stores it.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/ingest/lost_lines.hpp"
#include "daemon/ingest/origin.hpp"
#include "daemon/stitch/event_clock.hpp"

namespace trace2d::stitch {

enum class SessionStatus : std::uint8_t { running, complete, incomplete };

[[nodiscard]] constexpr std::string_view to_string(SessionStatus status) {
  switch (status) {
    case SessionStatus::running: return "running";
    case SessionStatus::complete: return "complete";
    case SessionStatus::incomplete: return "incomplete";
  }
  return "running";
}

[[nodiscard]] std::optional<SessionStatus> session_status_from_string(std::string_view text);

struct SessionRecord;
// The problem row of a session that lost lines: how many, and why.
[[nodiscard]] std::string lost_lines_message(const SessionRecord& record);
// The seq of that row: before any event's.
inline constexpr std::int64_t k_lost_lines_problem_seq = -1;

struct SessionRecord {
  std::int64_t id = 0;  // integer key that event rows refer to
  std::string sid;
  // The top of its owner's tree (docs/schema.md, `tree_sid`; set by
  // Stitcher::set_lineage). parent_sid, root_sid and depth are not kept:
  // they are what the SID says, and the row writer derives them from it.
  std::string tree_sid;
  std::optional<std::string> evt;
  std::optional<std::string> exe;
  std::optional<std::string> argv;  // JSON array text
  std::optional<std::string> cmd_name;
  std::optional<std::string> hierarchy;
  std::optional<std::string> cmd_mode;
  std::optional<std::string> worktree;
  std::optional<std::string> cmd_path;
  // The repository's nickname: the value of the def_param named by
  // Stitcher::Options::nickname_key (docs/otlp.md, "Rules").
  std::optional<std::string> nickname;
  std::optional<std::int64_t> start_time_us;
  std::optional<std::int64_t> end_time_us;
  std::optional<double> elapsed;
  std::optional<std::int64_t> exit_code;
  std::optional<std::int64_t> signo;
  SessionStatus status = SessionStatus::running;
  ingest::SourceKind source = ingest::SourceKind::stream;
  std::optional<std::int64_t> peer_pid;
  std::optional<std::int64_t> peer_uid;
  std::int64_t event_count = 0;
  std::int64_t error_count = 0;
  std::int64_t problem_count = 0;
  // Lines of it read and not stored as events because of a bound (the
  // rate valve, its uid's memory share, too long, cut short): it is not
  // whole. Its problem row (seq -1) says why.
  std::int64_t lines_lost = 0;
  std::int64_t first_received_us = 0;
  std::int64_t last_received_us = 0;
  // Event times are stored relative to this (the session's first "time").
  std::optional<std::int64_t> time_base_us;
  // When the process started: the `start` event's time minus its t_abs,
  // else the first time seen. Region and child t_start count from it.
  std::optional<std::int64_t> process_start_us;
  // The pid in the SID's last component ("-P<hex>"), for linking children.
  std::optional<std::int64_t> sid_pid;
  // argv normalised for matching a child_start that ran it (argv_key.hpp).
  std::optional<std::string> argv_key;

  // Not a column: of `lines_lost`, how many for each reason since this
  // daemon started (ingest::LossReason), for the problem row's message.
  std::array<std::int64_t, ingest::k_loss_reasons> lost_by_reason{};

  // Not a column: what changed since the last snapshot of the session
  // handed over, for consumers that keep a copy (the store chooses its
  // statement by it). `fresh`: none was handed over, nor found stored;
  // `placement`: its start time or the pid its SID names changed (what
  // places it under the child_start that ran it); `summary`: the rest only.
  enum class Change : std::uint8_t { fresh, placement, summary };
  Change change = Change::fresh;
};

// A region_enter paired with its region_leave (or left open).
struct RegionRecord {
  std::int64_t session = 0;
  std::int64_t seq = 0;  // of the region_enter (of the leave when there was no enter)
  std::optional<std::string> thread;
  std::optional<std::int64_t> nesting;
  std::optional<std::string> category;
  std::optional<std::string> label;
  std::optional<std::string> msg;
  std::optional<std::int64_t> repo;
  std::optional<double> t_start;  // seconds since the process started
  std::optional<double> elapsed;  // the leave's t_rel (event_clock.hpp); none while open
  std::optional<std::int64_t> parent_seq;
  std::optional<std::int64_t> leave_seq;
  EventClock at;  // not a column: when this record's event (enter, or lone leave) happened
};

// A child_start with its child_exit / child_ready. Fields a later event does
// not know stay empty and are merged with what was stored.
struct ChildRecord {
  std::int64_t session = 0;
  std::int64_t child_id = 0;
  std::optional<std::int64_t> start_seq;
  std::optional<std::string> child_class;
  std::optional<std::string> hook_name;
  std::optional<std::string> argv;  // JSON array text
  std::optional<std::string> argv_key;
  std::optional<bool> use_shell;
  std::optional<std::string> cd;
  std::optional<std::int64_t> start_us;
  std::optional<double> t_start;
  std::optional<std::int64_t> pid;
  std::optional<std::int64_t> code;
  std::optional<std::string> ready;
  std::optional<double> elapsed;
  std::optional<std::int64_t> end_us;
  std::optional<std::int64_t> end_seq;
  EventClock at;  // not a column: when this record's event happened
};

// A session the storage rule withholds (Stitcher::Options::storage_drop):
// its rows, if any were written before its command was known, are deleted,
// and it is counted per uid and rule (table `withheld_stats`).
struct WithheldRecord {
  std::int64_t session = 0;  // the id its rows have
  std::int64_t uid = -1;     // its sender (-1: none known, as from an import)
  std::string rule;          // the pattern that matched
  bool first = false;        // first record of it: count the session, delete its rows
  std::int64_t events = 0;   // its events since its last record
};

// What the stitcher hands on with a batch.
struct StitchChanges {
  std::vector<SessionRecord> sessions;
  std::vector<RegionRecord> regions;
  std::vector<ChildRecord> children;
  std::vector<WithheldRecord> withheld;
};

}  // namespace trace2d::stitch
