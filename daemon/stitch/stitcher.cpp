#include "daemon/stitch/stitcher.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include "daemon/stitch/argv_key.hpp"
#include <fmt/format.h>

#include "proto/command_name.hpp"
#include "proto/json_quote.hpp"
#include "proto/sid.hpp"

namespace trace2d::stitch {
namespace {

// How final a session's elapsed time is: atexit beats exit beats signal.
enum class EndRank : std::uint8_t { none, signal, exit, atexit };

std::string json_array(proto::StringList items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      out.push_back(',');
    }
    proto::append_json_quoted(out, items[i]);
  }
  out.push_back(']');
  return out;
}

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

template <typename T>
void set_if(std::optional<std::string>& field, const std::optional<T>& value) {
  if (value) {
    field.emplace(*value);
  }
}

std::optional<double> seconds_since(const std::optional<std::int64_t>& time_us,
                                    const std::optional<std::int64_t>& start_us) {
  if (!time_us || !start_us) {
    return std::nullopt;
  }
  return static_cast<double>(*time_us - *start_us) / 1e6;
}

template <typename T>
std::optional<std::string> copy(const std::optional<T>& text) {
  return text ? std::optional<std::string>(*text) : std::nullopt;
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
  RegionPairer regions;
  // When each child started, by child_id, until it exits: its duration when
  // the producer wrote no t_rel.
  std::unordered_map<std::int64_t, EventClock> open_children;
  // The row an earlier batch wrote, if any, and its indexed columns then.
  bool stored = false;
  std::optional<std::int64_t> stored_start_time_us;
  std::optional<std::int64_t> stored_sid_pid;
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

constexpr std::int64_t k_unknown_uid = -1;
// Children a session may have running at once, for their durations (git
// runs a handful; the rest of a flood is stored, just not timed this way).
constexpr std::size_t k_max_open_children = 512;

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
    set_if(record().evt, v.evt);
    set_if(record().exe, v.exe);
  }
  void operator()(const proto::Start& s) {
    SessionRecord& r = record();
    r.argv = json_array(s.argv);
    r.argv_key = argv_key(s.argv);
    live.exe = proto::executable_name(s.argv.empty() ? std::string_view() : s.argv.front());
    // t_abs comes from the payload: one no process can have (negative,
    // over a century) would overflow the microseconds; ignore it.
    constexpr double k_max_t_abs = 100.0 * 366 * 24 * 3600;
    if (event.time_us && s.t_abs && *s.t_abs >= 0 && *s.t_abs <= k_max_t_abs) {
      r.process_start_us = *event.time_us - std::llround(*s.t_abs * 1e6);
    }
  }
  void operator()(const proto::CmdName& c) {
    set_if(record().cmd_name, c.name);
    set_if(record().hierarchy, c.hierarchy);
  }
  // repo's: its subcommands name the run, unless git's cmd_name did.
  void operator()(const proto::Command& c) {
    SessionRecord& r = record();
    if (!r.cmd_name && !c.subcommands.empty()) {
      r.cmd_name = join(c.subcommands, ' ');
      if (!r.hierarchy && c.name) {
        r.hierarchy = std::string(*c.name) + '/' + join(c.subcommands, '/');
      }
    }
  }
  void operator()(const proto::CmdMode& c) { set_if(record().cmd_mode, c.name); }
  void operator()(const proto::CmdPath& c) { set_if(record().cmd_path, c.path); }
  // The first repository a process opens is its worktree (repo id 1).
  void operator()(const proto::DefRepo& d) {
    if (!record().worktree) {
      set_if(record().worktree, d.worktree);
    }
  }
  // The nickname is a config setting git reports as a def_param (only when
  // trace2.configParams names it); the last one wins, as in git's config.
  void operator()(const proto::DefParam& d) {
    const std::string& key = stitcher.m_options.nickname_key;
    if (!key.empty() && d.param && *d.param == key && d.value) {
      record().nickname = std::string(*d.value);
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
    paired.thread = copy(event.thread);
    paired.nesting = region.nesting;
    paired.category = copy(region.category);
    paired.label = copy(region.label);
    paired.msg = copy(region.msg);
    paired.repo = event.repo;
    paired.at = EventClock{region.t_abs, event.time_us};
    if (event.kind == proto::EventKind::region_enter) {
      paired.t_start = seconds_since(event.time_us, r.process_start_us);
      live.regions.enter(std::move(paired), stitcher.m_regions);
    } else {
      paired.elapsed = region.t_rel;
      paired.leave_seq = placement.seq;
      if (const auto at = seconds_since(event.time_us, r.process_start_us); at && region.t_rel) {
        paired.t_start = *at - *region.t_rel;  // only used when the enter is missing
      }
      live.regions.leave(std::move(paired), stitcher.m_regions);
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
    child.child_class = copy(start.child_class);
    child.hook_name = copy(start.hook_name);
    child.argv = json_array(start.argv);
    child.argv_key = child_argv_key(start.argv, start.use_shell.value_or(false));
    child.use_shell = start.use_shell;
    child.cd = copy(start.cd);
    child.start_us = event.time_us;
    child.t_start = seconds_since(event.time_us, r.process_start_us);
    child.at = EventClock{start.t_abs, event.time_us};
    if (live.open_children.size() < k_max_open_children) {  // bounded: anyone can send child_starts
      live.open_children.emplace(child.child_id, child.at);
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
    if (const auto open = live.open_children.find(*exit.child_id); !update.elapsed && open != live.open_children.end()) {
      update.elapsed = elapsed_between(open->second, update.at);  // no t_rel: event_clock.hpp
    }
    stitcher.m_children.push_back(std::move(update));
  }
  void operator()(const proto::ChildReady& ready) {
    if (!ready.child_id) {
      return;
    }
    ChildRecord update = child_update(*ready.child_id, ready.pid);
    update.ready = copy(ready.ready);
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
    : m_catalog(catalog), m_next_id(next_session_id), m_options(std::move(options)) {
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
  std::optional<SessionRecord> stored = m_catalog.find(sid);
  if (stored && !same_owner(stored->peer_uid, origin.peer_uid)) {
    refuse_other_owner(sid, *stored->peer_uid, *origin.peer_uid);
    return nullptr;
  }
  auto live = std::make_unique<Live>();
  if (stored) {
    live->record = std::move(*stored);
    live->stored = true;
    live->stored_start_time_us = live->record.start_time_us;
    live->stored_sid_pid = live->record.sid_pid;
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
  Live& ref = *live;
  m_sessions.emplace(ref.record.sid, std::move(live));
  return &ref;
}

// A child's SID names its parent, but only the parent's owner may hang
// children under it: another uid's "child" becomes a root of its own, so
// that nobody can graft processes into someone else's tree.
void Stitcher::set_lineage(SessionRecord& r) {
  const std::optional<std::string_view> parent_sid = proto::sid_parent(r.sid);
  if (!parent_sid) {
    r.lineage = SessionLineage{std::nullopt, r.sid, 0};
    return;
  }
  std::optional<SessionLineage> parent_lineage;
  std::optional<std::int64_t> parent_uid;
  if (auto found = m_sessions.find(*parent_sid); found != m_sessions.end()) {
    parent_lineage = found->second->record.lineage;
    parent_uid = found->second->record.peer_uid;
  } else if (auto stored = m_catalog.find(*parent_sid)) {
    parent_lineage = stored->lineage;
    parent_uid = stored->peer_uid;
  }
  if (!parent_lineage) {
    // Not seen (yet): the SID's own word, as git's tree will fill it in.
    r.lineage = SessionLineage{std::string(*parent_sid), std::string(proto::sid_root(r.sid)),
                               static_cast<std::int64_t>(proto::sid_depth(r.sid))};
  } else if (!same_owner(parent_uid, r.peer_uid)) {
    r.lineage = SessionLineage{std::nullopt, r.sid, 0};
  } else {
    r.lineage = SessionLineage{std::string(*parent_sid), parent_lineage->root_sid, parent_lineage->depth + 1};
  }
}

void Stitcher::refuse_other_owner(std::string_view sid, std::int64_t owner, std::int64_t sender) {
  m_refusal = fmt::format("session {} belongs to uid {}, not to the sender's uid {}", sid, owner, sender);
}

void Stitcher::attach(Live& live, Channel& channel) {
  channel.last = &live;
  if (channel.sessions.insert(&live).second) {
    ++live.open_channels;
    live.had_channel = true;
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

void Stitcher::mark_dirty(Live& live) {
  if (!live.dirty) {
    live.dirty = true;
    m_dirty.push_back(&live);
  }
}

std::optional<EventPlacement> Stitcher::place(const proto::Event& event, const ingest::Origin& origin,
                                         std::int64_t received_us) {
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
  if (!event.problems.empty()) {
    ++r.problem_count;
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
  mark_dirty(*live);
  count_running(*live);
  return placement;
}

void Stitcher::end_of_channel(std::uint64_t channel) {
  const auto found = m_channels.find(channel);
  if (found == m_channels.end()) {
    return;
  }
  for (Live* live : found->second.sessions) {
    --live->open_channels;
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
    if (!live->stored) {
      snapshot.write = SessionRecord::Write::upsert;
    } else if (r.start_time_us != live->stored_start_time_us || r.sid_pid != live->stored_sid_pid) {
      snapshot.write = SessionRecord::Write::update_indexed;
    } else {
      snapshot.write = SessionRecord::Write::update;
    }
    live->stored = true;
    live->stored_start_time_us = r.start_time_us;
    live->stored_sid_pid = r.sid_pid;
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
  std::erase_if(m_sessions, [&](const auto& entry) {
    const Live& live = *entry.second;
    // A session whose connections (or files) all ended gets nothing more:
    // it goes as soon as its row is committed. One without any (datagrams)
    // lingers, so that a late event finds it without a database lookup.
    return live.record.status != SessionStatus::running && !live.dirty && live.open_channels == 0 &&
           live.last_batch <= committed_batch &&
           (live.had_channel || now_us - live.record.last_received_us >= linger_us);
  });
}

}  // namespace trace2d::stitch
