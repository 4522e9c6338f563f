#include "daemon/stitch/stitcher.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include "daemon/stitch/argv_key.hpp"
#include <fmt/format.h>

#include "proto/command_name.hpp"
#include "proto/sid.hpp"

namespace trace2d::stitch {
namespace {

// How final a session's elapsed time is: atexit beats exit beats signal.
enum class EndRank : std::uint8_t { none, signal, exit, atexit };

std::string join(proto::StringList items, char separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      out.push_back(separator);
    }
    out.append(items[i]);
  }
  return out;
}

std::optional<double> seconds_since(const std::optional<std::int64_t>& time_us,
                                    const std::optional<std::int64_t>& start_us) {
  if (!time_us || !start_us) {
    return std::nullopt;
  }
  return static_cast<double>(*time_us - *start_us) / 1e6;
}

}  // namespace

struct Stitcher::Live {
  SessionRecord record;
  EndRank end_rank = EndRank::none;
  bool dirty = false;
  std::uint64_t last_batch = 0;
  std::size_t open_channels = 0;  // open channels that carried this session
  bool counted_running = false;   // in m_running_per_uid
  // Some channel carried it: once they all ended, nothing more can come.
  bool had_channel = false;
  // What this session holds, as charged to its uid (live_memory.hpp).
  std::size_t charged = 0;
  RegionPairer regions;
  // When each child started, by child_id, until it exits: its duration when
  // the producer wrote no t_rel. Bounded by k_max_open_children and charged.
  std::unordered_map<std::int64_t, EventClock> open_children;
  // Whether a snapshot was handed over (or the session was found stored),
  // and its placement then.
  bool handed_over = false;
  std::optional<std::int64_t> handed_start_time_us;
  std::optional<std::int64_t> handed_sid_pid;
  // The program name of its argv[0] (from `start`), for the storage rule.
  std::string exe;
  // The storage-rule pattern that withholds it, and how much of it has
  // been counted (WithheldRecord).
  std::optional<std::string> withheld_by;
  bool withheld_reported = false;
  std::int64_t withheld_events_counted = 0;
};

// The sessions an open channel carried, so that its end can reach them.
struct Stitcher::Channel {
  // Checked first: a channel almost always carries a single SID.
  Live* last = nullptr;
  std::unordered_set<Live*> sessions;
};

namespace {

// Whose a session is: the uid that sent its first event (from the kernel).
// An unknown uid (an import) belongs to no one and may be continued by anyone.
bool same_owner(const std::optional<std::int64_t>& owner, const std::optional<std::int64_t>& sender) {
  return !owner || !sender || *owner == *sender;
}

constexpr std::int64_t k_unknown_uid = UidMemory::k_unknown_uid;
// Children a session may have running at once, for their durations (git
// runs a handful; the rest of a flood is stored, just not timed this way).
constexpr std::size_t k_max_open_children = 512;
// Unseen SID levels set_lineage() looks through for a session's nearest
// seen ancestor before it asks the SID's root (git nests a few levels; the
// gaps it walks are levels that sent nothing, such as a prefix in
// GIT_TRACE2_PARENT_SID or a withheld session).
constexpr std::size_t k_max_lineage_walk = 8;

// What a session costs besides its text (live_memory.hpp): the Live
// itself, its map node and bucket, the heap blocks of its strings. An
// estimate that errs high; what matters is that it is charged and released
// alike.
constexpr std::size_t k_session_overhead = 256;
// A channel's entry for a session it carried, and an open child's entry.
constexpr std::size_t k_attach_bytes = 48;
constexpr std::size_t k_open_child_bytes = 64;

std::int64_t uid_of(const SessionRecord& r) { return r.peer_uid.value_or(k_unknown_uid); }

std::size_t text_bytes(const SessionRecord& r) {
  std::size_t bytes = r.sid.size() + r.tree_sid.size();
  for (const auto* field : {&r.evt, &r.exe, &r.argv, &r.cmd_name, &r.hierarchy, &r.cmd_mode, &r.worktree,
                            &r.cmd_path, &r.nickname, &r.argv_key}) {
    bytes += text_size(*field);
  }
  return bytes;
}

}  // namespace

// What one event changes in its session, by the kind of its payload (one
// payload type may serve two kinds: Exit for exit and atexit, Region for
// region_enter and region_leave). Regions and children are paired here as
// their events arrive.
struct Stitcher::Apply {
  Stitcher& stitcher;
  Live& live;
  const proto::Event& event;
  const EventPlacement& placement;

  SessionRecord& record() { return live.record; }
  [[nodiscard]] std::size_t max_value() const { return stitcher.m_options.max_value_bytes; }

  // A text column of the session, as far as the bounds allow.
  void set(std::optional<std::string>& field, std::string_view value, std::string_view column) {
    stitcher.keep(live, field, kept_text(value, max_value()), column);
  }
  template <typename T>
  void set_if(std::optional<std::string>& field, const std::optional<T>& value, std::string_view column) {
    if (value) {
      set(field, *value, column);
    }
  }
  // A text column of a region or child: not held with the session (or
  // charged when it is: RegionPairer::held_bytes), only cut.
  std::optional<std::string> capped(const std::optional<std::string_view>& value, std::string_view column) {
    if (!value) {
      return std::nullopt;
    }
    KeptText kept = kept_text(*value, max_value());
    if (kept.cut) {
      stitcher.note_cut(kept, column);
    }
    return std::move(kept.text);
  }

  void end(EndRank rank, const std::optional<double>& t_abs) {
    SessionRecord& r = record();
    r.status = SessionStatus::complete;
    if (rank >= live.end_rank) {
      live.end_rank = rank;
      if (t_abs) {
        r.elapsed = t_abs;
      }
      if (event.time_us) {
        r.end_time_us = event.time_us;
      }
    }
  }

  void operator()(const proto::Version& v) {
    set_if(record().evt, v.evt, "sessions.evt");
    set_if(record().exe, v.exe, "sessions.exe");
  }
  void operator()(const proto::Start& s) {
    SessionRecord& r = record();
    stitcher.keep(live, r.argv, kept_json_array(s.argv, max_value()), "sessions.argv");
    // Never cut (child stitching compares it whole; argv_key.hpp keeps it
    // short); over its uid's bound it is not kept, as any value.
    stitcher.keep(live, r.argv_key, KeptText{argv_key(s.argv), false}, "sessions.argv_key");
    // The program's name, for the storage rule: held with the session, so
    // cut and charged like a column (over the bound: empty, git's default).
    const std::size_t exe_before = live.exe.size();
    KeptText exe = kept_text(proto::executable_name(s.argv.empty() ? std::string_view() : s.argv.front()), max_value());
    if (exe.text.size() > exe_before && !stitcher.m_memory.fits(uid_of(r), exe.text.size() - exe_before)) {
      exe.text.clear();
    }
    live.exe = std::move(exe.text);
    stitcher.recharge(live, exe_before, live.exe.size());
    // t_abs comes from the payload: one no process can have (negative,
    // over a century) would overflow the microseconds; ignore it.
    constexpr double k_max_t_abs = 100.0 * 366 * 24 * 3600;
    if (event.time_us && s.t_abs && *s.t_abs >= 0 && *s.t_abs <= k_max_t_abs) {
      r.process_start_us = *event.time_us - std::llround(*s.t_abs * 1e6);
    }
  }
  void operator()(const proto::CmdName& c) {
    set_if(record().cmd_name, c.name, "sessions.cmd_name");
    set_if(record().hierarchy, c.hierarchy, "sessions.hierarchy");
  }
  // repo's: its subcommands name the run, unless git's cmd_name did.
  void operator()(const proto::Command& c) {
    SessionRecord& r = record();
    if (!r.cmd_name && !c.subcommands.empty()) {
      set(r.cmd_name, join(c.subcommands, ' '), "sessions.cmd_name");
      if (!r.hierarchy && c.name) {
        set(r.hierarchy, std::string(*c.name) + '/' + join(c.subcommands, '/'), "sessions.hierarchy");
      }
    }
  }
  void operator()(const proto::CmdMode& c) { set_if(record().cmd_mode, c.name, "sessions.cmd_mode"); }
  void operator()(const proto::CmdPath& c) { set_if(record().cmd_path, c.path, "sessions.cmd_path"); }
  // The first repository a process opens is its worktree (repo id 1).
  void operator()(const proto::DefRepo& d) {
    if (!record().worktree) {
      set_if(record().worktree, d.worktree, "sessions.worktree");
    }
  }
  // The nickname is a config setting git reports as a def_param (only when
  // trace2.configParams names it); the last one wins, as in git's config.
  void operator()(const proto::DefParam& d) {
    const std::string& key = stitcher.m_options.nickname_key;
    if (!key.empty() && d.param && *d.param == key && d.value) {
      set(record().nickname, *d.value, "sessions.nickname");
    }
  }
  void operator()(const proto::Error&) { ++record().error_count; }
  void operator()(const proto::Exit& e) {
    const EndRank rank = event.kind == proto::EventKind::atexit ? EndRank::atexit : EndRank::exit;
    if (rank >= live.end_rank && e.code) {
      record().exit_code = e.code;
    }
    end(rank, e.t_abs);
  }
  void operator()(const proto::Signal& s) {
    if (s.signo) {
      record().signo = s.signo;
    }
    end(EndRank::signal, s.t_abs);
  }

  void operator()(const proto::Region& region) {
    const SessionRecord& r = record();
    RegionRecord paired;
    paired.session = r.id;
    paired.seq = placement.seq;
    // Enter and leave are cut alike, so that they still pair.
    paired.thread = capped(event.thread, "regions.thread");
    paired.nesting = region.nesting;
    paired.category = capped(region.category, "regions.category");
    paired.label = capped(region.label, "regions.label");
    paired.msg = capped(region.msg, "regions.msg");
    paired.repo = event.repo;
    paired.at = EventClock{region.t_abs, event.time_us};
    if (event.kind == proto::EventKind::region_enter) {
      // By git's own clock when it says: `t_abs` and the leave's `t_rel`
      // come from one monotonic reading each, while `time` is read again
      // as the line is written, so a preemption between the two made a
      // region seem to start late and end after the region around it.
      paired.t_start = region.t_abs ? region.t_abs : seconds_since(event.time_us, r.process_start_us);
      auto room = RegionPairer::Room::some;
      if (!stitcher.m_memory.fits(uid_of(r), RegionPairer::held_cost(paired))) {
        room = RegionPairer::Room::none;
        stitcher.note_over_bound(live, "region not held open (stored unclosed, its leave as a region of its own)");
      }
      const std::size_t before = live.regions.held_bytes();
      live.regions.enter(std::move(paired), stitcher.m_regions, room);
      stitcher.recharge(live, before, live.regions.held_bytes());
    } else {
      paired.elapsed = region.t_rel;
      paired.leave_seq = placement.seq;
      if (const auto at = seconds_since(event.time_us, r.process_start_us); at && region.t_rel) {
        paired.t_start = *at - *region.t_rel;  // only used when the enter is missing
      }
      const std::size_t before = live.regions.held_bytes();
      live.regions.leave(std::move(paired), stitcher.m_regions);
      stitcher.recharge(live, before, live.regions.held_bytes());
    }
  }
  void operator()(const proto::ChildStart& start) {
    if (!start.child_id) {
      return;
    }
    const SessionRecord& r = record();
    ChildRecord child;
    child.session = r.id;
    child.child_id = *start.child_id;
    child.start_seq = placement.seq;
    child.child_class = capped(start.child_class, "children.class");
    child.hook_name = capped(start.hook_name, "children.hook_name");
    KeptText argv = kept_json_array(start.argv, max_value());
    if (argv.cut) {
      stitcher.note_cut(argv, "children.argv");
    }
    child.argv = std::move(argv.text);
    child.argv_key = child_argv_key(start.argv, start.use_shell.value_or(false));
    child.use_shell = start.use_shell;
    child.cd = capped(start.cd, "children.cd");
    child.start_us = event.time_us;
    child.t_start = seconds_since(event.time_us, r.process_start_us);
    child.at = EventClock{start.t_abs, event.time_us};
    if (live.open_children.size() < k_max_open_children) {  // bounded: anyone can send child_starts
      if (!stitcher.m_memory.fits(uid_of(r), k_open_child_bytes)) {
        stitcher.note_over_bound(live, "child's start time not held (its duration is its child_exit's t_rel alone)");
      } else if (live.open_children.emplace(child.child_id, child.at).second) {
        stitcher.charge(live, k_open_child_bytes);
      }
    }
    stitcher.m_children.push_back(std::move(child));
  }
  void operator()(const proto::ChildExit& exit) {
    if (!exit.child_id) {
      return;
    }
    ChildRecord update = child_update(*exit.child_id, exit.pid);
    update.code = exit.code;
    update.elapsed = exit.t_rel;
    update.end_us = event.time_us;
    update.end_seq = placement.seq;
    update.at = EventClock{exit.t_abs, event.time_us};
    if (const auto open = live.open_children.find(*exit.child_id); open != live.open_children.end()) {
      if (!update.elapsed) {
        update.elapsed = elapsed_between(open->second, update.at);  // no t_rel: event_clock.hpp
      }
      live.open_children.erase(open);
      stitcher.release(live, k_open_child_bytes);
    }
    stitcher.m_children.push_back(std::move(update));
  }
  void operator()(const proto::ChildReady& ready) {
    if (!ready.child_id) {
      return;
    }
    ChildRecord update = child_update(*ready.child_id, ready.pid);
    update.ready = capped(ready.ready, "children.ready");
    stitcher.m_children.push_back(std::move(update));
  }
  // Everything else is stored, but changes nothing in the session's summary.
  template <typename Payload>
  void operator()(const Payload&) {}

 private:
  ChildRecord child_update(std::int64_t child_id, const std::optional<std::int64_t>& pid) {
    ChildRecord update;
    update.session = record().id;
    update.child_id = child_id;
    update.pid = pid;
    return update;
  }
};

Stitcher::Stitcher(SessionCatalog& catalog, std::int64_t next_session_id, Options options)
    : m_catalog(catalog),
      m_next_id(next_session_id),
      m_options(std::move(options)),
      m_memory(m_options.max_live_bytes_per_uid) {
  set_storage_drop(m_options.storage_drop);
}

void Stitcher::set_storage_drop(const std::vector<std::string>& patterns) {
  m_storage_drop.clear();
  m_storage_drop.insert(patterns.begin(), patterns.end());
}

// Only the events that name the command can change the decision, and once
// withheld a session stays so: its earlier rows are gone.
void Stitcher::withhold_if_ruled(Live& live) {
  const SessionRecord& r = live.record;
  const std::string_view exe = live.exe.empty() ? proto::executable_name({}) : std::string_view(live.exe);
  const auto rule = proto::find_command_rule(m_storage_drop, exe, r.cmd_name.value_or(std::string()),
                                             r.cmd_mode.value_or(std::string()));
  if (rule != m_storage_drop.end()) {
    live.withheld_by = *rule;
  }
}

Stitcher::~Stitcher() = default;

Stitcher::Live* Stitcher::find_or_create(std::string_view sid, const ingest::Origin& origin,
                                          std::int64_t received_us) {
  if (auto found = m_sessions.find(sid); found != m_sessions.end()) {
    return found->second.get();
  }
  // Checked before the database is asked: refusing a flood costs nothing.
  const std::int64_t uid = origin.peer_uid.value_or(k_unknown_uid);
  if (const auto held = m_running_per_uid.find(uid);
      uid != k_unknown_uid && held != m_running_per_uid.end() && held->second >= m_options.max_sessions_per_uid) {
    m_refusal = fmt::format("too many open sessions for uid {} (limit {})", uid, m_options.max_sessions_per_uid);
    return nullptr;
  }
  // A new session costs at most this (its SID in the record, the map's key
  // and its lineage); a stored one is checked again below with its text.
  if (!m_memory.fits(uid, k_session_overhead + 4 * sid.size())) {
    refuse_over_bound(uid);
    return nullptr;
  }
  std::optional<SessionRecord> stored = m_catalog.find(sid);
  if (stored && !same_owner(stored->peer_uid, origin.peer_uid)) {
    refuse_other_owner(sid, *stored->peer_uid, *origin.peer_uid);
    return nullptr;
  }
  auto live = std::make_unique<Live>();
  if (stored) {
    live->record = std::move(*stored);
    live->handed_over = true;
    live->handed_start_time_us = live->record.start_time_us;
    live->handed_sid_pid = live->record.sid_pid;
    if (live->record.status == SessionStatus::complete) {
      live->end_rank = live->record.elapsed ? EndRank::exit : EndRank::signal;
    }
  } else {
    SessionRecord& r = live->record;
    r.id = m_next_id++;
    r.sid = std::string(sid);
    r.source = origin.kind;
    r.peer_pid = origin.peer_pid;
    r.peer_uid = origin.peer_uid;
    r.first_received_us = received_us;
    r.sid_pid = proto::sid_pid(sid);
    set_lineage(r);
  }
  const std::size_t cost = k_session_overhead + live->record.sid.size() + text_bytes(live->record);
  if (!m_memory.fits(uid, cost)) {
    refuse_over_bound(uid);
    return nullptr;
  }
  Live& ref = *live;
  m_sessions.emplace(ref.record.sid, std::move(live));
  charge(ref, cost);
  return &ref;
}

// The tree (parent_sid, root_sid and depth are the SID's word, written from
// it by the row writer) from the nearest ancestor trace2d has seen (in memory, else stored): the same
// uid's gives its tree, another uid's makes this session the top of a tree
// of its own (whichever came first: a child under someone else's session,
// or someone else's session squatting the SID a child names as its
// parent), none the SID's root. The walk is bounded: a SID deeper than
// k_max_lineage_walk unseen levels is decided by its root alone, so a new
// session costs at most that many lookups, however deep its SID is.
void Stitcher::set_lineage(SessionRecord& r) {
  const std::string_view root = proto::sid_root(r.sid);
  struct Seen {
    std::optional<std::int64_t> uid;
    std::string tree_sid;
  };
  const auto seen = [this](std::string_view sid) -> std::optional<Seen> {
    if (auto found = m_sessions.find(sid); found != m_sessions.end()) {
      return Seen{found->second->record.peer_uid, found->second->record.tree_sid};
    }
    if (auto stored = m_catalog.find(sid)) {
      return Seen{stored->peer_uid, std::move(stored->tree_sid)};
    }
    return std::nullopt;
  };
  std::optional<Seen> nearest;
  std::optional<std::string_view> ancestor = proto::sid_parent(r.sid);
  for (std::size_t level = 0; ancestor && level < k_max_lineage_walk && !nearest; ++level) {
    nearest = seen(*ancestor);
    ancestor = proto::sid_parent(*ancestor);
  }
  if (!nearest && ancestor) {
    nearest = seen(root);
  }
  if (!nearest) {
    r.tree_sid = std::string(root);
  } else if (nearest->uid != r.peer_uid) {  // imports (no uid) are nobody's but their own
    r.tree_sid = r.sid;
  } else {
    // A row stored before tree_sid existed reads it as its root_sid (the
    // migration's backfill), never empty; one from a catalog that lacks it
    // still must not put this session in no tree.
    r.tree_sid = nearest->tree_sid.empty() ? std::string(root) : std::move(nearest->tree_sid);
  }
}

void Stitcher::refuse_over_bound(std::int64_t uid) {
  m_refusal = fmt::format("uid {}'s sessions in memory hold {} bytes, its bound (limit {})", uid,
                          m_memory.held(uid), m_memory.bound());
}

void Stitcher::refuse_other_owner(std::string_view sid, std::int64_t owner, std::int64_t sender) {
  m_refusal = fmt::format("session {} belongs to uid {}, not to the sender's uid {}", sid, owner, sender);
}

void Stitcher::attach(Live& live, Channel& channel) {
  channel.last = &live;
  if (channel.sessions.insert(&live).second) {
    ++live.open_channels;
    live.had_channel = true;
    charge(live, k_attach_bytes);  // always: the channel's end must find it
  }
}

// Running sessions are what a sender can pile up (a finished one leaves
// memory once committed, or after the linger time): they are what is
// bounded per uid.
void Stitcher::count_running(Live& live) {
  const bool running = live.record.status == SessionStatus::running;
  if (running == live.counted_running) {
    return;
  }
  live.counted_running = running;
  const std::int64_t uid = live.record.peer_uid.value_or(k_unknown_uid);
  if (running) {
    ++m_running_per_uid[uid];
  } else if (const auto held = m_running_per_uid.find(uid); held != m_running_per_uid.end() && --held->second == 0) {
    m_running_per_uid.erase(held);
  }
}

void Stitcher::charge(Live& live, std::size_t bytes) {
  if (bytes == 0) {
    return;  // a lone leave, a region not held: nothing changes
  }
  m_memory.charge(uid_of(live.record), bytes);
  live.charged += bytes;
  m_live_bytes_total.store(m_memory.total(), std::memory_order_relaxed);
}

void Stitcher::release(Live& live, std::size_t bytes) {
  if (bytes == 0) {
    return;
  }
  m_memory.release(uid_of(live.record), bytes);
  live.charged -= bytes;
  m_live_bytes_total.store(m_memory.total(), std::memory_order_relaxed);
}

void Stitcher::recharge(Live& live, std::size_t before, std::size_t after) {
  if (after > before) {
    charge(live, after - before);
  } else {
    release(live, before - after);
  }
}

void Stitcher::keep(Live& live, std::optional<std::string>& field, KeptText value, std::string_view column) {
  const std::size_t before = text_size(field);
  if (value.text.size() > before && !m_memory.fits(uid_of(live.record), value.text.size() - before)) {
    release(live, before);
    field.reset();
    note_over_bound(live, fmt::format("{} not kept", column));
    return;
  }
  recharge(live, before, value.text.size());
  if (value.cut) {
    note_cut(value, column);
  }
  field = std::move(value.text);
}

void Stitcher::note_cut(const KeptText& value, std::string_view column) {
  fmt::format_to(std::back_inserter(m_note), "{}{} cut to {} bytes (limit per value {})", m_note.empty() ? "" : "; ",
                 column, value.text.size(), m_options.max_value_bytes);
  m_values_cut.fetch_add(1, std::memory_order_relaxed);
}

void Stitcher::note_over_bound(const Live& live, std::string_view what) {
  const std::int64_t uid = uid_of(live.record);
  fmt::format_to(std::back_inserter(m_note), "{}{}: uid {}'s sessions in memory hold {} bytes (limit {})",
                 m_note.empty() ? "" : "; ", what, uid, m_memory.held(uid), m_memory.bound());
  m_values_cut.fetch_add(1, std::memory_order_relaxed);
}

void Stitcher::mark_dirty(Live& live) {
  if (!live.dirty) {
    live.dirty = true;
    m_dirty.push_back(&live);
  }
}

std::optional<EventPlacement> Stitcher::place(proto::Event& event, const ingest::Origin& origin,
                                         std::int64_t received_us) {
  m_note.clear();
  Channel* channel = nullptr;
  if (origin.kind != ingest::SourceKind::dgram) {  // datagrams have no channel that ends
    channel = &m_channels[origin.channel];
  }
  Live* live = channel != nullptr && channel->last != nullptr && channel->last->record.sid == event.sid
                   ? channel->last
                   : find_or_create(event.sid, origin, received_us);
  if (live == nullptr) {
    return std::nullopt;
  }
  if (!same_owner(live->record.peer_uid, origin.peer_uid)) {
    refuse_other_owner(event.sid, *live->record.peer_uid, *origin.peer_uid);
    return std::nullopt;
  }
  if (channel != nullptr) {
    attach(*live, *channel);
  }
  SessionRecord& r = live->record;
  EventPlacement placement{r.id, r.event_count, r.time_base_us ? r.time_base_us : event.time_us};
  ++r.event_count;
  r.last_received_us = received_us;
  if (event.time_us) {
    if (!r.time_base_us) {
      r.time_base_us = event.time_us;
    }
    if (!r.start_time_us) {
      r.start_time_us = event.time_us;
    }
    if (!r.process_start_us) {
      r.process_start_us = event.time_us;  // refined by the start event below
    }
  }
  if (r.status == SessionStatus::incomplete && !proto::is_terminal(event.kind)) {
    r.status = SessionStatus::running;  // it was cut off, yet it is still talking
  }

  const std::size_t regions_before = m_regions.size();
  const std::size_t children_before = m_children.size();
  std::visit(Apply{*this, *live, event, placement}, event.payload);
  if (!live->withheld_by && !m_storage_drop.empty() &&
      (event.kind == proto::EventKind::start || event.kind == proto::EventKind::cmd_name ||
       event.kind == proto::EventKind::cmd_mode)) {
    withhold_if_ruled(*live);
  }
  if (live->withheld_by) {
    // Nothing of a withheld session is written: not what this event paired either.
    m_regions.erase(m_regions.begin() + static_cast<std::ptrdiff_t>(regions_before), m_regions.end());
    m_children.erase(m_children.begin() + static_cast<std::ptrdiff_t>(children_before), m_children.end());
    placement.withheld = true;
  }
  if (!m_note.empty()) {
    event.problems.append(event.problems.empty() ? "" : "; ").append(m_note).append(" (the event holds it whole)");
  }
  if (!event.problems.empty()) {
    ++r.problem_count;
  }
  mark_dirty(*live);
  count_running(*live);
  return placement;
}

bool Stitcher::note_lost(std::string_view sid, const ingest::Origin& origin, std::uint64_t lines,
                         ingest::LossReason reason, std::int64_t received_us) {
  Channel* channel = nullptr;
  if (origin.kind != ingest::SourceKind::dgram) {
    if (const auto found = m_channels.find(origin.channel); found != m_channels.end()) {
      channel = &found->second;
    }
  }
  Live* live = nullptr;
  if (channel != nullptr && channel->last != nullptr && (sid.empty() || channel->last->record.sid == sid)) {
    live = channel->last;
  } else if (!sid.empty()) {
    live = find_or_create(sid, origin, received_us);
    if (live != nullptr && same_owner(live->record.peer_uid, origin.peer_uid) &&
        origin.kind != ingest::SourceKind::dgram) {
      attach(*live, m_channels[origin.channel]);  // its channel's end ends it
    }
  }
  if (live == nullptr || !same_owner(live->record.peer_uid, origin.peer_uid)) {
    return false;
  }
  SessionRecord& r = live->record;
  if (r.lines_lost == 0) {
    ++r.problem_count;  // its one problem row for lost lines
  }
  r.lines_lost += static_cast<std::int64_t>(lines);
  r.lost_by_reason[static_cast<std::size_t>(reason)] += static_cast<std::int64_t>(lines);
  r.last_received_us = std::max(r.last_received_us, received_us);
  mark_dirty(*live);
  count_running(*live);
  return true;
}

void Stitcher::end_of_channel(std::uint64_t channel) {
  const auto found = m_channels.find(channel);
  if (found == m_channels.end()) {
    return;
  }
  for (Live* live : found->second.sessions) {
    --live->open_channels;
    release(*live, k_attach_bytes);
    if (live->open_channels == 0 && live->record.status == SessionStatus::running) {
      live->record.status = SessionStatus::incomplete;
      mark_dirty(*live);
      count_running(*live);
    }
  }
  m_channels.erase(found);
}

void Stitcher::writer_exited(std::uint64_t channel) {
  const auto found = m_channels.find(channel);
  if (found == m_channels.end()) {
    return;
  }
  for (Live* live : found->second.sessions) {
    if (live->open_channels == 1 && live->record.status == SessionStatus::running) {
      live->record.status = SessionStatus::incomplete;
      mark_dirty(*live);
      count_running(*live);
    }
  }
}

void Stitcher::expire_idle(std::int64_t now_us, std::chrono::milliseconds timeout) {
  const std::int64_t timeout_us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  for (auto& [sid, live] : m_sessions) {
    if (live->record.status == SessionStatus::running && live->open_channels == 0 &&
        now_us - live->record.last_received_us >= timeout_us) {
      live->record.status = SessionStatus::incomplete;
      mark_dirty(*live);
      count_running(*live);
    }
  }
}

void Stitcher::collect_changes(StitchChanges& out, std::uint64_t batch_number) {
  for (Live* live : m_dirty) {
    live->dirty = false;
    live->last_batch = batch_number;
    if (live->withheld_by) {
      WithheldRecord& withheld = out.withheld.emplace_back();
      withheld.session = live->record.id;
      withheld.uid = live->record.peer_uid.value_or(k_unknown_uid);
      withheld.rule = *live->withheld_by;
      withheld.first = !live->withheld_reported;
      withheld.events = live->record.event_count - live->withheld_events_counted;
      live->withheld_reported = true;
      live->withheld_events_counted = live->record.event_count;
      continue;
    }
    SessionRecord& snapshot = out.sessions.emplace_back(live->record);
    const SessionRecord& r = live->record;
    if (!live->handed_over) {
      snapshot.change = SessionRecord::Change::fresh;
    } else if (r.start_time_us != live->handed_start_time_us || r.sid_pid != live->handed_sid_pid) {
      snapshot.change = SessionRecord::Change::placement;
    } else {
      snapshot.change = SessionRecord::Change::summary;
    }
    live->handed_over = true;
    live->handed_start_time_us = r.start_time_us;
    live->handed_sid_pid = r.sid_pid;
    live->regions.flush_open(m_regions);  // still open: written now, again when closed
  }
  m_dirty.clear();
  std::move(m_regions.begin(), m_regions.end(), std::back_inserter(out.regions));
  m_regions.clear();
  std::move(m_children.begin(), m_children.end(), std::back_inserter(out.children));
  m_children.clear();
}

void Stitcher::evict(std::uint64_t committed_batch, std::int64_t now_us) {
  const std::int64_t linger_us =
      std::chrono::duration_cast<std::chrono::microseconds>(m_options.linger).count();
  for (auto it = m_sessions.begin(); it != m_sessions.end();) {
    Live& live = *it->second;
    // A session whose connections (or files) all ended gets nothing more:
    // it goes as soon as its row is committed. One without any (datagrams)
    // lingers, so that a late event finds it without a database lookup.
    if (live.record.status != SessionStatus::running && !live.dirty && live.open_channels == 0 &&
        live.last_batch <= committed_batch &&
        (live.had_channel || now_us - live.record.last_received_us >= linger_us)) {
      release(live, live.charged);
      it = m_sessions.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace trace2d::stitch
