// The storage rule with the real git: the commands it names are in no
// table, counted per rule (withheld_stats, trace2ctl status); every other
// session is stored whole and its tree stitched, across a fetch's children
// and a shell alias whose children include a withheld command; a SIGHUP
// changes the list.

#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

long total(const std::map<std::string, long>& counts) {
  long sum = 0;
  for (const auto& [sid, n] : counts) {
    sum += n;
  }
  return sum;
}

class StorageRuleE2e : public ::testing::Test {
 protected:
  // A clone one commit behind its upstream (in `dir`), with a shell alias
  // that runs a withheld command and a kept one.
  static std::string setup(const TempDir& dir) {
    const std::string clone = clone_behind(dir);
    EXPECT_EQ(run_git(clone, {"config", "alias.both", "!git rev-parse HEAD && git log -1 --oneline"}).exit_code, 0);
    settle_repo(clone);
    return clone;
  }

  // The same commands each time: a fetch (children: upload-pack,
  // pack-objects, rev-list...), rev-parse, the alias, status.
  void run_commands(const std::string& repo, std::map<std::string, std::string> env) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"fetch", "--no-auto-gc", "origin"}, {"rev-parse", "HEAD"}, {"both"}, {"status"}}) {
      const ProcessResult git = run_git(repo, args, env);
      ASSERT_EQ(git.exit_code, 0) << args.front() << ": " << git.err;
    }
  }

  TempDir m_dir;
  TempDir m_twin_dir;
};

TEST_F(StorageRuleE2e, DroppedCommandsAreCountedAndEverythingElseIsWholeAndStitched) {
  write_file(m_dir.file("c.toml"), "[storage]\ndrop = [\"git:rev-parse\"]\n");
  RunningDaemon daemon(m_dir, {"--config", m_dir.file("c.toml")});
  const std::string repo = setup(m_dir);
  const std::string twin = setup(m_twin_dir);
  run_commands(repo, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  const std::string capture = m_twin_dir.file("capture");
  std::filesystem::create_directories(capture);
  run_commands(twin, {{"GIT_TRACE2_EVENT", capture}});
  const auto expected = count_events_in_trace_dir(capture);

  // A reload adds a pattern: the next status is withheld too.
  write_file(m_dir.file("c.toml"), "[storage]\ndrop = [\"git:rev-parse\", \"git:status\"]\n");
  daemon.process().signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] {
    return daemon.process().err_so_far().find("SIGHUP: applying storage.drop") != std::string::npos;
  })) << daemon.process().err_so_far();
  ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
  ASSERT_TRUE(wait_until([&] {
    return open_db(daemon.db_path()).query_int("SELECT count(*) FROM withheld_stats WHERE rule = 'git:status'") == 1;
  }));
  const ProcessResult status = ctl(daemon.db_path(), {"status"});
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;

  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE cmd_name = 'rev-parse'"), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
  // Two rev-parse runs (one by the alias), nothing else withheld by that rule.
  EXPECT_EQ(db.query_int("SELECT sum(sessions) FROM withheld_stats WHERE rule = 'git:rev-parse'"), 2);
  EXPECT_EQ(db.query_int("SELECT count(DISTINCT uid) FROM withheld_stats"), 1);
  EXPECT_EQ(db.query_int("SELECT uid FROM withheld_stats LIMIT 1"), static_cast<long>(::getuid()));
  // Nothing lost: what git wrote (the twin's capture, before the reload) is
  // stored or counted, event for event and session for session.
  const auto stored = count_events_in_db(daemon.db_path());
  const long withheld_events =
      db.query_int("SELECT sum(events) FROM withheld_stats WHERE rule = 'git:rev-parse'").value_or(0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE cmd_name = 'status'"), 1);
  const long late_status_events =
      db.query_int("SELECT sum(events) FROM withheld_stats WHERE rule = 'git:status'").value_or(0);
  EXPECT_GT(late_status_events, 0);
  EXPECT_EQ(total(stored) + withheld_events, total(expected));
  EXPECT_EQ(static_cast<long>(stored.size()) + 2, static_cast<long>(expected.size()));
  // Every stored session is whole.
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions s WHERE status != 'complete' OR event_count != "
                         "(SELECT count(*) FROM event_store e WHERE e.session = s.id)"),
            0);
  // The fetch tree is stitched: its children under it, pack-objects under upload-pack.
  const auto fetch_sid = db.query_text("SELECT sid FROM sessions WHERE cmd_name = 'fetch'");
  ASSERT_TRUE(fetch_sid);
  EXPECT_GE(db.query_int("SELECT count(*) FROM children WHERE sid = '" + *fetch_sid + "' AND child_sid IS NOT NULL"),
            1);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions g JOIN sessions p ON g.parent_sid = p.sid"
                         " WHERE g.cmd_name = 'pack-objects' AND p.cmd_name = 'upload-pack'"
                         " AND g.root_sid = '" + *fetch_sid + "'"),
            1);
  // The alias keeps its log child, placed under the child_start that ran it;
  // the rev-parse it ran first is not there, and its child_start stays.
  const auto alias_sid = db.query_text("SELECT sid FROM sessions WHERE cmd_name = '_run_shell_alias_'");
  ASSERT_TRUE(alias_sid);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE parent_sid = '" + *alias_sid + "'"), 1);
  EXPECT_EQ(db.query_text("SELECT cmd_name FROM sessions WHERE parent_sid = '" + *alias_sid + "'"), "log");
  const ProcessResult tree = ctl(daemon.db_path(), {"tree", *fetch_sid});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_NE(tree.out.find("upload-pack"), std::string::npos) << tree.out;
  EXPECT_NE(tree.out.find("pack-objects"), std::string::npos) << tree.out;

  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("withheld by the storage rule: git:rev-parse 2 sessions (" +
                            std::to_string(withheld_events) + " events), git:status 1 sessions (" +
                            std::to_string(late_status_events) + " events)"),
            std::string::npos)
      << status.out;
}

}  // namespace
}  // namespace trace2d::test
