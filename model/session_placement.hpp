#pragma once
// Where each session of a process tree hangs (see ProcessInfo::placed_by):
//   - under the child_start that ran it (children.child_sid), the first
//     child_start claiming it when two do (the same command run twice
//     through a shell in overlapping windows);
//   - else under the exec of its parent session that it replaced: the
//     latest exec without an exec_result sent before it started, when its
//     SID's pid is its parent's (exec keeps the pid);
//   - else under a child_start of its parent that claims no session and was
//     running when it started: a hook or script whose git commands git
//     cannot link by pid (in brief mode, where child_start has no time,
//     the only such child not shorter than the session);
//   - else at the top level of its nearest ancestor session in the tree;
//   - else at the top of the tree.
// Parent and ancestors are found from the session's stored parent_sid, and
// only among the sessions of its own tree and owner (ProcessInfo::tree_sid,
// owner): a session whose nearest ancestor in the set is another owner's,
// or of another tree, is a top, and a child_start claims no session of
// another owner. (The loader gives one owner's tree; the rule holds for
// any set of rows.)
// Sets `placed_by` on every session of `rows`.

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "model/process_tree.hpp"

namespace trace2d::model {

struct TreePlacement {
  // (index of the parent in rows, child_id) -> sessions under that child_start
  std::map<std::pair<std::size_t, std::int64_t>, std::vector<std::size_t>> by_child;
  // (index of the parent in rows, seq of its exec) -> the sessions that replaced it
  std::map<std::pair<std::size_t, std::int64_t>, std::vector<std::size_t>> by_exec;
  // index of the ancestor -> sessions at its top level
  std::map<std::size_t, std::vector<std::size_t>> orphans;
  std::vector<std::size_t> top;
};

[[nodiscard]] TreePlacement place_sessions(std::vector<ProcessRows>& rows);

}  // namespace trace2d::model
