#include "model/session_placement.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>

namespace trace2d::model {
namespace {

std::optional<std::string> parent_of(const std::string& sid) {
  const auto slash = sid.rfind('/');
  if (slash == std::string::npos) {
    return std::nullopt;
  }
  return sid.substr(0, slash);
}

// The child of `parent` that claims no session and ran while `session`
// started (the latest such, for nested runs); nullopt when none did.
// In brief mode (trace2.eventBrief) git's child_start and child_exit carry
// no time: when none of the parent's children has one, the one unclaimed
// child that could hold the session (not shorter than it) is taken, and
// none when several could.
std::optional<std::int64_t> running_child(const ProcessRows& parent, const ProcessRows& session,
                                          const std::set<std::pair<std::size_t, std::int64_t>>& claimed_children,
                                          std::size_t parent_index) {
  if (!parent.info.start_us || !session.info.start_us || *session.info.start_us < *parent.info.start_us) {
    return std::nullopt;
  }
  const double at = static_cast<double>(*session.info.start_us - *parent.info.start_us) / 1e6;
  std::optional<std::int64_t> best;
  double best_start = 0;
  std::optional<std::int64_t> timeless;
  int timeless_count = 0;
  bool any_timed = false;
  for (const ChildInfo& child : parent.children) {
    any_timed = any_timed || child.t_start.has_value();
    if (claimed_children.contains({parent_index, child.child_id})) {
      continue;
    }
    if (!child.t_start) {
      if (!child.elapsed || !session.info.elapsed || *child.elapsed >= *session.info.elapsed) {
        timeless = child.child_id;
        ++timeless_count;
      }
      continue;
    }
    const bool started = *child.t_start <= at;
    const bool not_ended = !child.elapsed || *child.t_start + *child.elapsed >= at;
    if (started && not_ended && (!best || *child.t_start >= best_start)) {
      best = child.child_id;
      best_start = *child.t_start;
    }
  }
  if (!any_timed && timeless_count == 1) {
    return timeless;
  }
  return best;
}

// A session's successful execs (no exec_result), by when they were sent
// (untimed ones first: they may have come at any time): (t_start, seq).
using ExecTimes = std::vector<std::pair<double, std::int64_t>>;

ExecTimes successful_execs(const ProcessRows& rows) {
  ExecTimes out;
  for (const ExecInfo& exec : rows.execs) {
    if (!exec.code) {
      out.emplace_back(exec.t_start.value_or(-std::numeric_limits<double>::infinity()), exec.seq);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

// The exec of `parent` that `session` replaced: the same pid (exec keeps
// it; git's SID says it), no exec_result (that one failed), the latest sent
// before the session started (when both times are known). A binary search:
// a hostile parent's many execs cost each of its many children little.
std::optional<std::int64_t> replaced_exec(const ProcessRows& parent, const ExecTimes& execs,
                                          const ProcessRows& session) {
  if (!parent.info.pid || parent.info.pid != session.info.pid || execs.empty()) {
    return std::nullopt;
  }
  if (!parent.info.start_us || !session.info.start_us) {
    return execs.back().second;
  }
  const double at = static_cast<double>(*session.info.start_us - *parent.info.start_us) / 1e6;
  const auto after = std::upper_bound(execs.begin(), execs.end(), at,
                                      [](double t, const auto& exec) { return t < exec.first; });
  return after == execs.begin() ? std::nullopt : std::optional<std::int64_t>((after - 1)->second);
}

bool same_tree(const ProcessInfo& a, const ProcessInfo& b) { return a.owner == b.owner && a.tree_sid == b.tree_sid; }

}  // namespace

TreePlacement place_sessions(std::vector<ProcessRows>& rows) {
  std::map<std::string, std::size_t> by_sid;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    by_sid.emplace(rows[i].info.sid, i);
  }
  TreePlacement placement;
  std::set<std::size_t> claimed;
  std::set<std::pair<std::size_t, std::int64_t>> claimed_children;
  std::map<std::size_t, ExecTimes> execs_of;  // by index in rows, made when first needed
  for (std::size_t p = 0; p < rows.size(); ++p) {
    for (const ChildInfo& child : rows[p].children) {
      if (!child.child_sid) {
        continue;
      }
      const auto found = by_sid.find(*child.child_sid);
      if (found == by_sid.end()) {
        // It ran a session this set does not hold (the exporter loads part
        // of a tree, load_export_rows()): taken all the same, as in a build
        // of the whole tree, where that session is there.
        claimed_children.insert({p, child.child_id});
        continue;
      }
      // Two child_starts can match one session (same command through a
      // shell, started in overlapping windows): the first keeps it.
      if (!same_tree(rows[p].info, rows[found->second].info)) {
        continue;  // another owner's session with the child's SID and pid: not the child
      }
      if (found->second != p && claimed.insert(found->second).second) {
        placement.by_child[{p, child.child_id}].push_back(found->second);
        claimed_children.insert({p, child.child_id});
        rows[found->second].info.placed_by = "child_sid";
      }
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (claimed.contains(i)) {
      continue;
    }
    std::optional<std::string> ancestor = rows[i].info.parent_sid;
    while (ancestor && !by_sid.contains(*ancestor)) {
      ancestor = parent_of(*ancestor);
    }
    if (!ancestor || !same_tree(rows[by_sid.at(*ancestor)].info, rows[i].info)) {
      rows[i].info.placed_by = "root";
      placement.top.push_back(i);
      continue;
    }
    const std::size_t a = by_sid.at(*ancestor);
    if (const auto& parent = rows[i].info.parent_sid; parent && *parent == *ancestor && !rows[a].execs.empty()) {
      const auto cached = execs_of.find(a);
      const ExecTimes& execs =
          cached != execs_of.end() ? cached->second : execs_of.emplace(a, successful_execs(rows[a])).first->second;
      if (const auto exec = replaced_exec(rows[a], execs, rows[i])) {
        rows[i].info.placed_by = "exec";
        placement.by_exec[{a, *exec}].push_back(i);
        continue;
      }
    }
    if (const auto child = running_child(rows[a], rows[i], claimed_children, a)) {
      rows[i].info.placed_by = "child_window";
      placement.by_child[{a, *child}].push_back(i);
    } else {
      rows[i].info.placed_by = "parent_sid";
      placement.orphans[a].push_back(i);
    }
  }
  return placement;
}

}  // namespace trace2d::model
