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
  return "RECURSIVE " + runs + "(sid, command, elapsed, peer_uid, git) AS (SELECT s.sid, " +
         model::display_name_sql("s") +
         ", s.elapsed, s.peer_uid, t2_is_git(s.exe, s.argv) FROM sessions s"
         " WHERE s.status = 'complete' AND s.elapsed > 0 AND s.cmd_name IS NOT NULL AND " +
         model::top_level_condition("s") + window_condition +
         "), advice_tree(sid, run_sid, git, peer_uid) AS (SELECT sid, sid, git, peer_uid FROM " + runs +
         " UNION ALL SELECT k.sid, t.run_sid, t2_is_git(k.exe, k.argv), k.peer_uid FROM advice_tree t"
         " JOIN sessions k ON k.parent_sid = t.sid AND +k.peer_uid IS t.peer_uid WHERE t.git), " + processes +
         " AS (SELECT t.sid AS sid, t.run_sid AS run_sid, r.command AS command, p.cmd_name AS cmd_name,"
         " r.elapsed AS elapsed, p.worktree AS worktree FROM advice_tree t JOIN " + runs +
         " r ON r.sid = t.run_sid JOIN sessions p ON p.sid = t.sid)";
}

}  // namespace trace2d::ctl::advice
