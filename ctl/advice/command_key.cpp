#include "ctl/advice/command_key.hpp"

#include "model/command_identity.hpp"

namespace trace2d::ctl::advice {

std::string runs_sql(const std::string& window_condition) {
  const std::string runs(k_runs_table);
  const std::string processes(k_processes_table);
  // A session whose parent is a git process is never top-level, so walking
  // down from the runs through git parents reaches every process once.
  // (A non-git top-level session, a program using the client library, is a
  // run of its own; the gits it starts are runs of their own too.)
  // Each process's row is read once: what w needs of it and of its run
  // is carried down the walk rather than joined back.
  return "RECURSIVE " + runs + "(sid, command, elapsed, peer_uid, git, cmd_name, worktree) AS (SELECT s.sid, " +
         model::display_name_sql("s") +
         ", s.elapsed, s.peer_uid, t2_is_git(s.exe, s.argv), s.cmd_name, s.worktree FROM sessions s"
         " WHERE s.status = 'complete' AND s.elapsed > 0 AND s.cmd_name IS NOT NULL AND " +
         model::top_level_condition("s") + window_condition + "), " + processes +
         "(sid, run_sid, command, cmd_name, elapsed, worktree, git, peer_uid) AS (SELECT sid, sid, command, cmd_name,"
         " elapsed, worktree, git, peer_uid FROM " + runs +
         " UNION ALL SELECT k.sid, t.run_sid, t.command, k.cmd_name, t.elapsed, k.worktree, t2_is_git(k.exe, k.argv),"
         " k.peer_uid FROM " + processes + " t JOIN sessions k ON k.parent_sid = t.sid AND +k.peer_uid IS t.peer_uid"
         " WHERE t.git)";
}

}  // namespace trace2d::ctl::advice
