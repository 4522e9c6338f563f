#include "daemon/stitch/stitcher.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include "daemon/stitch/argv_key.hpp"
#include "proto/sid.hpp"

#include "proto/json_quote.hpp"

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

// "…-P<8 hex digits>" at the end of the SID's last component: git's pid.
std::optional<std::int64_t> pid_in_sid(std::string_view sid) {
  const std::string_view leaf = proto::sid_leaf(sid);
  const auto p = leaf.rfind("-P");
  if (p == std::string_view::npos || leaf.size() - p - 2 != 8) {
    return std::nullopt;
  }
  std::int64_t pid = 0;
  for (const char c : leaf.substr(p + 2)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) {
      return std::nullopt;
    }
    pid = pid * 16 + digit;
  }
  return pid;
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
  std::vector<std::uint64_t> channels;  // open channels that carried this session
  // Some channel carried it: once they all ended, nothing more can come.
  bool had_channel = false;
  RegionPairer regions;
  std::map<std::int64_t, ChildRecord> open_children;  // by child_id, until they exit
  // The row an earlier batch wrote, if any, and its indexed columns then.
  bool stored = false;
  std::optional<std::int64_t> stored_start_time_us;
  std::optional<std::int64_t> stored_sid_pid;
};

// Regions and children: paired here as their events arrive.
void Stitcher::track(Live& live, const proto::Event& event, const Placement& placement) {
  std::vector<RegionRecord>& regions = m_regions;
  std::vector<ChildRecord>& children = m_children;
  SessionRecord& r = live.record;
  switch (event.kind) {
    case proto::EventKind::region_enter:
    case proto::EventKind::region_leave: {
      const auto* region = event.as<proto::Region>();
      if (region == nullptr) {
        return;
      }
      RegionRecord record;
      record.session = r.id;
      record.seq = placement.seq;
      record.thread = copy(event.thread);
      record.nesting = region->nesting;
      record.category = copy(region->category);
      record.label = copy(region->label);
      record.msg = copy(region->msg);
      record.repo = event.repo;
      record.at = EventClock{region->t_abs, event.time_us};
      if (event.kind == proto::EventKind::region_enter) {
        record.t_start = seconds_since(event.time_us, r.process_start_us);
        live.regions.enter(std::move(record));
      } else {
        record.elapsed = region->t_rel;
        record.leave_seq = placement.seq;
        if (const auto at = seconds_since(event.time_us, r.process_start_us); at && region->t_rel) {
          record.t_start = *at - *region->t_rel;  // only used when the enter is missing
        }
        live.regions.leave(std::move(record), regions);
      }
      return;
    }
    case proto::EventKind::child_start: {
      const auto* start = event.as<proto::ChildStart>();
      if (start == nullptr || !start->child_id) {
        return;
      }
      ChildRecord record;
      record.session = r.id;
      record.child_id = *start->child_id;
      record.start_seq = placement.seq;
      record.child_class = copy(start->child_class);
      record.hook_name = copy(start->hook_name);
      record.argv = json_array(start->argv);
      record.argv_key = child_argv_key(start->argv, start->use_shell.value_or(false));
      record.use_shell = start->use_shell;
      record.cd = copy(start->cd);
      record.start_us = event.time_us;
      record.t_start = seconds_since(event.time_us, r.process_start_us);
      record.at = EventClock{start->t_abs, event.time_us};
      live.open_children[record.child_id] = record;
      children.push_back(std::move(record));
      return;
    }
    case proto::EventKind::child_exit:
    case proto::EventKind::child_ready: {
      std::optional<std::int64_t> id;
      ChildRecord update;
      if (const auto* exit = event.as<proto::ChildExit>()) {
        id = exit->child_id;
        update.pid = exit->pid;
        update.code = exit->code;
        update.elapsed = exit->t_rel;
        update.end_us = event.time_us;
        update.end_seq = placement.seq;
        update.at = EventClock{exit->t_abs, event.time_us};
      } else if (const auto* ready = event.as<proto::ChildReady>()) {
        id = ready->child_id;
        update.pid = ready->pid;
        update.ready = copy(ready->ready);
      }
      if (!id) {
        return;
      }
      update.session = r.id;
      update.child_id = *id;
      if (const auto open = live.open_children.find(*id);
          event.kind == proto::EventKind::child_exit && !update.elapsed && open != live.open_children.end()) {
        update.elapsed = elapsed_between(open->second.at, update.at);  // no t_rel: event_clock.hpp
      }
      children.push_back(std::move(update));
      if (event.kind == proto::EventKind::child_exit) {
        live.open_children.erase(*id);
      }
      return;
    }
    default:
      return;
  }
}

Stitcher::Stitcher(SessionCatalog& catalog, std::int64_t next_session_id, Options options)
    : m_catalog(catalog), m_next_id(next_session_id), m_options(options) {}

Stitcher::~Stitcher() = default;

Stitcher::Live& Stitcher::find_or_create(std::string_view sid, const source::Origin& origin,
                                          std::int64_t received_us) {
  if (auto found = m_sessions.find(sid); found != m_sessions.end()) {
    return *found->second;
  }
  auto live = std::make_unique<Live>();
  if (auto stored = m_catalog.find(sid)) {
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
    r.sid_pid = pid_in_sid(sid);
  }
  Live& ref = *live;
  m_sessions.emplace(ref.record.sid, std::move(live));
  return ref;
}

void Stitcher::attach(Live& live, std::uint64_t channel) {
  if (std::find(live.channels.begin(), live.channels.end(), channel) == live.channels.end()) {
    live.channels.push_back(channel);
    m_channels[channel].push_back(&live);
    live.had_channel = true;
  }
}

void Stitcher::mark_dirty(Live& live) {
  if (!live.dirty) {
    live.dirty = true;
    m_dirty.push_back(&live);
  }
}

Placement Stitcher::place(const proto::Event& event, const source::Origin& origin,
                          std::int64_t received_us) {
  Live* live = nullptr;
  if (auto channel = m_channels.find(origin.channel); channel != m_channels.end()) {
    for (auto it = channel->second.rbegin(); it != channel->second.rend(); ++it) {
      if ((*it)->record.sid == event.sid) {
        live = *it;
        break;
      }
    }
  }
  if (live == nullptr) {
    live = &find_or_create(event.sid, origin, received_us);
    if (origin.kind != source::SourceKind::dgram) {
      attach(*live, origin.channel);  // datagrams have no channel that ends
    }
  }
  SessionRecord& r = live->record;
  const Placement placement{r.id, r.event_count, r.time_base_us ? r.time_base_us : event.time_us};
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

  const auto end = [&](EndRank rank, const std::optional<double>& t_abs) {
    r.status = SessionStatus::complete;
    if (rank >= live->end_rank) {
      live->end_rank = rank;
      if (t_abs) {
        r.elapsed = t_abs;
      }
      if (event.time_us) {
        r.end_time_us = event.time_us;
      }
    }
  };

  switch (event.kind) {
    case proto::EventKind::version:
      if (const auto* v = event.as<proto::Version>()) {
        set_if(r.evt, v->evt);
        set_if(r.exe, v->exe);
      }
      break;
    case proto::EventKind::start:
      if (const auto* s = event.as<proto::Start>()) {
        r.argv = json_array(s->argv);
        r.argv_key = argv_key(s->argv);
        // t_abs comes from the payload: one no process can have (negative,
        // over a century) would overflow the microseconds; ignore it.
        constexpr double k_max_t_abs = 100.0 * 366 * 24 * 3600;
        if (event.time_us && s->t_abs && *s->t_abs >= 0 && *s->t_abs <= k_max_t_abs) {
          r.process_start_us = *event.time_us - std::llround(*s->t_abs * 1e6);
        }
      }
      break;
    case proto::EventKind::cmd_name:
      if (const auto* c = event.as<proto::CmdName>()) {
        set_if(r.cmd_name, c->name);
        set_if(r.hierarchy, c->hierarchy);
      }
      break;
    case proto::EventKind::command:
      // repo's: its subcommands name the run, unless git's cmd_name did.
      if (const auto* c = event.as<proto::Command>(); c != nullptr && !r.cmd_name && !c->subcommands.empty()) {
        r.cmd_name = join(c->subcommands, ' ');
        if (!r.hierarchy && c->name) {
          r.hierarchy = std::string(*c->name) + '/' + join(c->subcommands, '/');
        }
      }
      break;
    case proto::EventKind::cmd_mode:
      if (const auto* c = event.as<proto::CmdMode>()) {
        set_if(r.cmd_mode, c->name);
      }
      break;
    case proto::EventKind::cmd_path:
      if (const auto* c = event.as<proto::CmdPath>()) {
        set_if(r.cmd_path, c->path);
      }
      break;
    case proto::EventKind::def_repo:
      // The first repository a process opens is its worktree (repo id 1).
      if (const auto* d = event.as<proto::DefRepo>(); d != nullptr && !r.worktree) {
        set_if(r.worktree, d->worktree);
      }
      break;
    case proto::EventKind::error:
      ++r.error_count;
      break;
    case proto::EventKind::exit:
    case proto::EventKind::atexit:
      if (const auto* e = event.as<proto::Exit>()) {
        const EndRank rank = event.kind == proto::EventKind::atexit ? EndRank::atexit : EndRank::exit;
        if (rank >= live->end_rank && e->code) {
          r.exit_code = e->code;
        }
        end(rank, e->t_abs);
      }
      break;
    case proto::EventKind::signal:
      if (const auto* s = event.as<proto::Signal>()) {
        if (s->signo) {
          r.signo = s->signo;
        }
        end(EndRank::signal, s->t_abs);
      }
      break;
    default:
      break;
  }
  track(*live, event, placement);
  mark_dirty(*live);
  return placement;
}

void Stitcher::end_of_channel(std::uint64_t channel) {
  const auto found = m_channels.find(channel);
  if (found == m_channels.end()) {
    return;
  }
  for (Live* live : found->second) {
    std::erase(live->channels, channel);
    if (live->channels.empty() && live->record.status == SessionStatus::running) {
      live->record.status = SessionStatus::incomplete;
      mark_dirty(*live);
    }
  }
  m_channels.erase(found);
}

void Stitcher::expire_idle(std::int64_t now_us, std::chrono::milliseconds timeout) {
  const std::int64_t timeout_us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  for (auto& [sid, live] : m_sessions) {
    if (live->record.status == SessionStatus::running && live->channels.empty() &&
        now_us - live->record.last_received_us >= timeout_us) {
      live->record.status = SessionStatus::incomplete;
      mark_dirty(*live);
    }
  }
}

void Stitcher::collect_changes(StitchChanges& out, std::uint64_t batch_number) {
  for (Live* live : m_dirty) {
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
    live->dirty = false;
    live->last_batch = batch_number;
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
    return live.record.status != SessionStatus::running && !live.dirty && live.channels.empty() &&
           live.last_batch <= committed_batch &&
           (live.had_channel || now_us - live.record.last_received_us >= linger_us);
  });
}

}  // namespace trace2d::stitch
