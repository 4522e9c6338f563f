#pragma once
// Assigns every event to its session (one per SID), numbers it, and keeps the
// session's summary (command, argv, exit code, status...) up to date.
//
// A process is complete at exit/atexit/signal, not at EOF: git's socket is
// inherited by its children, so EOF can come long after. A channel (stream
// connection) that ends while its session is still running leaves the
// session incomplete.
//
// Every local user can send events, so nothing here may cost more per event
// as sessions, channels or regions pile up (sessions and channels are found
// by hash, region stacks are bounded), what one uid can make it hold is
// bounded per uid (its running sessions by number; the bytes its live
// sessions hold, text included, by live_memory.hpp's account), and a session
// belongs to the uid that opened it: another uid's events for it are refused
// (docs/security.md).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "daemon/ingest/origin.hpp"
#include "daemon/settings/setting.hpp"
#include "daemon/stitch/live_memory.hpp"
#include "daemon/stitch/region_pairer.hpp"
#include "daemon/stitch/session_catalog.hpp"
#include "daemon/stitch/session_record.hpp"
#include "proto/event.hpp"

namespace trace2d::stitch {

// Where an event goes: its session's key and its sequence number there.
struct EventPlacement {
  std::int64_t session = 0;
  std::int64_t seq = 0;
  std::optional<std::int64_t> time_base_us;
  // The session is withheld by the storage rule: consumers pass the event by.
  bool withheld = false;
};

class Stitcher {
 public:
  struct Options {
    // A finished session that came on no channel (datagrams) stays in memory
    // this long after its last event, so late events need no database lookup.
    std::chrono::milliseconds linger{2000};
    // Running sessions one uid may have at once (finished ones leave memory
    // once committed, or after `linger`). Beyond it, that uid's new
    // sessions are refused.
    std::size_t max_sessions_per_uid = 10000;
    // What one uid's sessions in memory (running, or finished and not yet
    // forgotten) may hold: their summaries' text, open regions and open
    // children, and a fixed cost each. Over it, that uid's text values are
    // not kept, its regions not held open, and its new sessions refused.
    std::size_t max_live_bytes_per_uid = std::size_t{64} << 20;
    // Each text value kept for the sessions, regions and children columns is
    // cut to this (argv between whole elements); the event keeps it whole.
    std::size_t max_value_bytes = std::size_t{64} << 10;
    // The def_param whose value is stored as sessions.nickname ("": none).
    std::string nickname_key = "otel.trace2.nickname";
    // The storage rule: commands whose sessions are not stored at all
    // ("git:status", "git:checkout#branch", "git-remote-https"), matched as
    // the OTLP detail rules match (proto/command_name.hpp). A session is
    // withheld from the event that gives it a matching name (its `start`
    // for the exe, `cmd_name` for the verb, `cmd_mode` for the mode) on; what
    // was written of it before is deleted, and it is counted
    // (docs/configuration.md, "[storage]").
    std::vector<std::string> storage_drop{};

    // The settings that fill these ([limits], [storage];
    // docs/configuration.md). nickname_key is otlp.nickname_key, which the
    // exporter shares (daemon/app hands it over); linger and
    // max_value_bytes are not settings. `Self` is Options or const Options.
    template <typename Self, typename Visitor>
    static void visit_settings(Self& o, Visitor& v) {
      using settings::k_mib;
      using settings::Key;
      using settings::Range;
      using settings::Reload;
      v.integer(Key{"limits", "per_uid_sessions", "--per-uid-sessions", "N", "Sessions one uid may have open at once"},
                o.max_sessions_per_uid, Range{1, 1LL << 24});
      v.integer(Key{"limits", "per_uid_live_mib", "--per-uid-live-mib", "MIB",
                    "Memory one uid's sessions in memory may hold (text, open regions)"},
                o.max_live_bytes_per_uid, Range{1, 1LL << 20, k_mib});
      v.list(Key{"storage", "drop", "--storage-drop", "PATTERN",
                 "Commands not stored at all, e.g. git:status (repeatable; replaces the file's list)", Reload::live},
             o.storage_drop, storage_drop_problem);
    }
    // "exe", "exe:verb" or "exe:verb#mode", as a detail rule's pattern; an
    // "=" says a detail rule was meant (the storage rule has no levels).
    static std::string storage_drop_problem(const std::string& pattern) {
      if (pattern.empty() || pattern.front() == ':' || pattern.front() == '#' ||
          pattern.find_first_of("= \t") != std::string::npos) {
        return "lists '" + pattern + "', which is not exe, exe:verb or exe:verb#mode (such as git:status)";
      }
      return {};
    }
  };

  Stitcher(SessionCatalog& catalog, std::int64_t next_session_id, Options options);
  ~Stitcher();
  Stitcher(const Stitcher&) = delete;
  Stitcher& operator=(const Stitcher&) = delete;

  // Where the event goes, or nothing when it is refused (refusal() says
  // why; the caller stores it as a reject): its session belongs to another
  // uid, or its uid has too many sessions open, or holds its bound of
  // bytes. A value of the event cut or not kept in memory is noted in
  // `event.problems` (it is stored whole with the event).
  std::optional<EventPlacement> place(proto::Event& event, const ingest::Origin& origin,
                                 std::int64_t received_us);
  [[nodiscard]] const std::string& refusal() const { return m_refusal; }

  // Lines of a session lost before they were parsed (a bound dropped or
  // refused them): counted on the session `sid` names (when empty, the
  // channel's current session), which records how many and why. False when
  // there is no such session its sender owns (the caller counts them for
  // the sender's uid). A session not seen yet is opened, as by an event.
  bool note_lost(std::string_view sid, const ingest::Origin& origin, std::uint64_t lines, ingest::LossReason reason,
                 std::int64_t received_us);

  // The channel ended (EOF): its sessions that are still running become incomplete.
  void end_of_channel(std::uint64_t channel);
  // The process writing to the channel has exited while the channel stays
  // open (a child inherited the descriptor, such as a hook's `sleep 30`):
  // its sessions still running, and written through no other channel,
  // become incomplete now rather than at EOF. The channel stays open: a
  // late event would make its session running again, as after an EOF.
  void writer_exited(std::uint64_t channel);

  // Appends a snapshot of every session changed since the last call, and the
  // regions and children to write. They go into batch `batch_number`.
  void collect_changes(StitchChanges& out, std::uint64_t batch_number);

  // Sessions that belong to no channel (datagram ones have no EOF), are still
  // running and have been silent for `timeout` become incomplete.
  void expire_idle(std::int64_t now_us, std::chrono::milliseconds timeout);

  // Forgets finished sessions whose rows are committed (batch number at most
  // `committed_batch`) and whose channels all ended (or, without any, that
  // have been quiet for the linger time).
  void evict(std::uint64_t committed_batch, std::int64_t now_us);

  [[nodiscard]] std::size_t live_sessions() const { return m_sessions.size(); }
  // What `uid`'s sessions in memory hold (live_memory.hpp), on the stitcher's thread.
  [[nodiscard]] std::size_t live_bytes(std::int64_t uid) const { return m_memory.held(uid); }
  // All uids' together, and the values cut or not kept since start: from any thread.
  [[nodiscard]] std::uint64_t live_bytes_total() const { return m_live_bytes_total.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t values_cut() const { return m_values_cut.load(std::memory_order_relaxed); }

  // Replaces Options::storage_drop (a reload): sessions withheld stay so;
  // the new list applies to the names sessions get from now on.
  void set_storage_drop(const std::vector<std::string>& patterns);

 private:
  struct Live;
  struct Channel;
  // nullptr (and m_refusal set) when a new session is over its uid's bound.
  Live* find_or_create(std::string_view sid, const ingest::Origin& origin, std::int64_t received_us);
  void set_lineage(SessionRecord& record);
  void refuse_other_owner(std::string_view sid, std::int64_t owner, std::int64_t sender);
  void refuse_over_bound(std::int64_t uid);
  void attach(Live& live, Channel& channel);
  void mark_dirty(Live& live);
  void count_running(Live& live);
  void withhold_if_ruled(Live& live);
  // Every byte a session holds is charged to its uid through these, and
  // recorded in the session, so that forgetting it releases exactly that.
  void charge(Live& live, std::size_t bytes);
  void release(Live& live, std::size_t bytes);
  void recharge(Live& live, std::size_t before, std::size_t after);
  // Sets a text column of the session as far as the bounds allow.
  void keep(Live& live, std::optional<std::string>& field, KeptText value, std::string_view column);
  void note_cut(const KeptText& value, std::string_view column);
  void note_over_bound(const Live& live, std::string_view what);
  struct Apply;  // what an event changes in its session: a visitor over its payload

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  SessionCatalog& m_catalog;
  std::int64_t m_next_id;
  Options m_options;
  std::unordered_map<std::string, std::unique_ptr<Live>, Hash, std::equal_to<>> m_sessions;
  std::unordered_set<std::string, Hash, std::equal_to<>> m_storage_drop;
  std::unordered_map<std::uint64_t, Channel> m_channels;  // open channels, by id
  std::unordered_map<std::int64_t, std::size_t> m_running_per_uid;  // running sessions in m_sessions
  std::string m_refusal;
  UidMemory m_memory;
  // What this event's values lost in memory, for its problems.
  std::string m_note;
  std::atomic<std::uint64_t> m_live_bytes_total{0};
  std::atomic<std::uint64_t> m_values_cut{0};
  std::vector<Live*> m_dirty;
  std::vector<RegionRecord> m_regions;
  std::vector<ChildRecord> m_children;
};

}  // namespace trace2d::stitch
