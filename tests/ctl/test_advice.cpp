// The advice rules' thresholds, on hand-made traces: each run written as
// the events git 2.39 sends (the shapes tests/e2e/test_advice.cpp sees from
// real git), imported by the real `trace2d import`, then every rule asked
// through the library. One case on each side of each threshold.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ctl/advice/advice.hpp"
#include "db/sqlite.hpp"
#include "model/command_identity.hpp"
#include "proto/timestamp.hpp"
#include "tests/ctl/sample_database.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {
namespace {

// One run: its events after `version` and `start`, as JSON members after
// event/sid/thread/time. Times count from the run's start.
struct GitRun {
  GitRun(std::string run_sid, std::string run_command, double run_elapsed)
      : sid(std::move(run_sid)), command(std::move(run_command)), elapsed(run_elapsed) {}

  std::string sid;
  std::string command;
  double elapsed = 1.0;
  std::string worktree = "/home/u/repo";
  std::string typed;  // argv[1] when not the command: an alias's name
  std::vector<std::pair<double, std::string>> events;  // (t_abs, "\"event\":...,...")

  GitRun& region(const std::string& category, const std::string& label, double start, double seconds) {
    events.push_back({start, R"("event":"region_enter","nesting":1,"category":")" + category + R"(","label":")" +
                                 label + "\""});
    events.push_back({start + seconds, R"("event":"region_leave","nesting":1,"category":")" + category +
                                           R"(","label":")" + label + R"(","t_rel":)" + std::to_string(seconds)});
    return *this;
  }
  GitRun& child(int id, const std::string& start_members, double start, double seconds) {
    events.push_back({start, R"("event":"child_start","t_abs":)" + std::to_string(start) + R"(,"child_id":)" +
                                 std::to_string(id) + "," + start_members});
    events.push_back({start + seconds, R"("event":"child_exit","t_abs":)" + std::to_string(start + seconds) +
                                           R"(,"child_id":)" + std::to_string(id) +
                                           R"(,"pid":4242,"code":0,"t_rel":)" + std::to_string(seconds)});
    return *this;
  }
  GitRun& data(const std::string& category, const std::string& key, const std::string& value, double at) {
    events.push_back({at, R"("event":"data","t_abs":)" + std::to_string(at) + R"(,"t_rel":)" + std::to_string(at) +
                              R"(,"nesting":1,"category":")" + category + R"(","key":")" + key + R"(","value":")" +
                              value + "\""});
    return *this;
  }
  GitRun& param(const std::string& name, const std::string& value) {
    events.push_back({0.002, R"("event":"def_param","scope":"local","param":")" + name + R"(","value":")" + value +
                                 "\""});
    return *this;
  }
};

class AdviceRules : public ::testing::Test {
 protected:
  // Writes the runs as one trace file, imports it, and returns the findings.
  std::vector<ctl::advice::Finding> advise(const std::vector<GitRun>& runs, ctl::Window window = {}) {
    const std::int64_t now = proto::unix_now_us();
    std::string lines;
    std::int64_t offset = 0;
    for (const GitRun& run : runs) {
      const std::int64_t start = now - 3'600'000'000 + offset;
      offset += 10'000'000;
      const auto at = [&](double t) { return proto::format_utc_timestamp(start + static_cast<std::int64_t>(t * 1e6)); };
      const auto line = [&](double t, const std::string& members) {
        lines += R"({"sid":")" + run.sid + R"(","thread":"main","time":")" + at(t) + "\"," + members + "}\n";
      };
      line(0, R"("event":"version","evt":"3","exe":"2.39.5")");
      line(0.001, R"("event":"start","t_abs":0.001,"argv":["git",")" +
                      (run.typed.empty() ? run.command : run.typed) + "\"]");
      line(0.001, R"("event":"def_repo","repo":1,"worktree":")" + run.worktree + "\"");
      line(0.001, R"("event":"cmd_name","name":")" + run.command + R"(","hierarchy":")" + run.command + "\"");
      for (const auto& [t, members] : run.events) {
        line(t, members);
      }
      line(run.elapsed, R"("event":"exit","t_abs":)" + std::to_string(run.elapsed) + R"(,"code":0)");
      line(run.elapsed, R"("event":"atexit","t_abs":)" + std::to_string(run.elapsed) + R"(,"code":0)");
    }
    write_file(m_dir.file("trace.jsonl"), lines);
    const std::string db_path = m_dir.file("advice-" + std::to_string(m_imports++) + ".db");
    ProcessSpec spec;
    spec.argv = {TRACE2D_BIN, "--config", "", "import", "--db", db_path, m_dir.file("trace.jsonl")};
    const ProcessResult imported = run_process(spec);
    EXPECT_EQ(imported.exit_code, 0) << imported.err;
    m_last_db = db_path;
    db::Database db(db_path, db::OpenMode::read_only);
    model::register_sql_functions(db);  // as trace2ctl's every connection has them
    return ctl::advice::find_advice(db, window, {});
  }

  static std::vector<ctl::advice::Finding> of_rule(const std::vector<ctl::advice::Finding>& findings,
                                                   const std::string& rule) {
    std::vector<ctl::advice::Finding> kept;
    for (const auto& f : findings) {
      if (f.rule == rule) {
        kept.push_back(f);
      }
    }
    return kept;
  }

 private:
  TempDir m_dir;
  int m_imports = 0;

 protected:
  std::string m_last_db;
};

GitRun commit_with_hook(const std::string& sid, double hook_seconds, double elapsed = 1.0) {
  GitRun run{sid, "commit", elapsed};
  run.child(0, R"("child_class":"hook","hook_name":"pre-commit","use_shell":false,"argv":[".git/hooks/pre-commit"])",
            0.01, hook_seconds);
  return run;
}

TEST_F(AdviceRules, SlowHookNeedsThreeRunsAMedianOf200msAndAFifthOfTheTime) {
  const auto found = of_rule(advise({commit_with_hook("a", 0.5), commit_with_hook("b", 0.4),
                                     commit_with_hook("c", 0.3), GitRun{"d", "commit", 0.1}}),
                             "slow-hook");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].command, "commit");
  EXPECT_EQ(found[0].subject, "hook pre-commit");
  EXPECT_EQ(found[0].runs, 3);
  EXPECT_EQ(found[0].command_runs, 4);
  EXPECT_NEAR(found[0].seconds, 1.2, 1e-6);
  EXPECT_NEAR(found[0].median_seconds, 0.4, 1e-6);
  EXPECT_NEAR(found[0].share(), 1.2 / 3.0, 1e-6);
  EXPECT_EQ(found[0].sids, (std::vector<std::string>{"a", "b", "c"})) << "most time first";
  EXPECT_EQ(found[0].fix, "git commit --no-verify");
  EXPECT_NE(found[0].evidence.find("3 of 4 runs of `commit`"), std::string::npos) << found[0].evidence;
  EXPECT_NE(found[0].finding.find("pre-commit hook in /home/u/repo (3 runs), "), std::string::npos) << found[0].finding;

  EXPECT_TRUE(of_rule(advise({commit_with_hook("a", 0.5), commit_with_hook("b", 0.5)}), "slow-hook").empty())
      << "two runs are not enough";
  EXPECT_TRUE(of_rule(advise({commit_with_hook("a", 0.15, 0.3), commit_with_hook("b", 0.15, 0.3),
                              commit_with_hook("c", 0.15, 0.3)}),
                      "slow-hook")
                  .empty())
      << "150 ms a run is below 200 ms";
  EXPECT_TRUE(of_rule(advise({commit_with_hook("a", 0.3, 2.0), commit_with_hook("b", 0.3, 2.0),
                              commit_with_hook("c", 0.3, 2.0)}),
                      "slow-hook")
                  .empty())
      << "15% of the time is below a fifth";
}

// A hook is a repository's, or one core.hooksPath's for many: the runs are
// pooled per hook (one run in each of five repositories is a finding) and
// the finding names where they ran, most runs first.
TEST_F(AdviceRules, ASlowHookNamesTheRepositoriesItsRunsWereIn) {
  std::vector<GitRun> runs;
  for (const auto& [sid, repo] : std::vector<std::pair<std::string, std::string>>{
           {"a", "/w/app"}, {"b", "/w/app"}, {"c", "/w/lib"}, {"d", "/w/doc"}, {"e", "/w/web"}, {"f", "/w/cli"}}) {
    runs.push_back(commit_with_hook(sid, 0.5));
    runs.back().worktree = repo;
  }
  const auto found = of_rule(advise(runs), "slow-hook");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].runs, 6);
  EXPECT_NE(found[0].finding.find("pre-commit hook in /w/app (2 runs), /w/cli (1 run), /w/doc (1 run) and 2 more, "),
            std::string::npos)
      << found[0].finding;
}

GitRun credential_fill(const std::string& sid, double helper_seconds, const std::string& helper) {
  GitRun run{sid, "fetch", 1.0};
  run.child(0, R"("child_class":"?","use_shell":true,"argv":[")" + helper + R"( get"])", 0.05, helper_seconds);
  return run;
}

TEST_F(AdviceRules, CredentialHelperIsTheShellChildThatGetsAndItsFixKeepsIt) {
  const auto found = of_rule(advise({credential_fill("a", 0.5, "git credential-vault"),
                                     credential_fill("b", 0.5, "git credential-vault"),
                                     credential_fill("c", 0.5, "git credential-vault")}),
                             "credential-helper");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].subject, "credential helper git credential-vault");
  EXPECT_EQ(found[0].fix,
            "git config --global --replace-all credential.helper 'cache --timeout=3600' && "
            "git config --global --add credential.helper 'vault'");
  EXPECT_TRUE(of_rule(advise({credential_fill("a", 0.1, "x"), credential_fill("b", 0.1, "x"),
                              credential_fill("c", 0.1, "x")}),
                      "credential-helper")
                  .empty())
      << "100 ms is below 200 ms";
  // A shell alias's command line that happens to end in " get" is no helper.
  GitRun alias{"a", "_run_shell_alias_", 1.0};
  alias.child(0, R"("child_class":"shell_alias","use_shell":true,"argv":["slow get"])", 0.01, 0.9);
  GitRun alias2 = alias;
  alias2.sid = "b";
  GitRun alias3 = alias;
  alias3.sid = "c";
  EXPECT_TRUE(of_rule(advise({alias, alias2, alias3}), "credential-helper").empty());
}

GitRun commit_with_auto_gc(const std::string& sid, double seconds) {
  GitRun run{sid, "commit", seconds + 0.1};
  run.child(0, R"("child_class":"?","use_shell":false,"argv":["git","maintenance","run","--auto","--quiet"])", 0.05,
            seconds);
  return run;
}

TEST_F(AdviceRules, ForegroundMaintenanceNeedsTwoRunsOfAQuarterSecond) {
  const auto found = of_rule(advise({commit_with_auto_gc("a", 0.6), commit_with_auto_gc("b", 0.3),
                                     commit_with_auto_gc("c", 0.1)}),
                             "foreground-maintenance");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].runs, 2) << "the 100 ms check counts for nothing";
  EXPECT_EQ(found[0].fix, "git -C '/home/u/repo' maintenance start");
  EXPECT_TRUE(of_rule(advise({commit_with_auto_gc("a", 0.6), commit_with_auto_gc("b", 0.2)}),
                      "foreground-maintenance")
                  .empty());
}

GitRun status_run(const std::string& sid, double refresh, double untracked, double elapsed, int entries) {
  GitRun run{sid, "status", elapsed};
  run.data("index", "read/cache_nr", std::to_string(entries), 0.01);
  run.region("index", "preload", 0.02, refresh);
  run.region("dir", "read_directory", 0.03 + refresh, untracked);
  return run;
}

TEST_F(AdviceRules, StatusRefreshNeedsALargeIndexAndSaysWhatItCannotSee) {
  const auto found = of_rule(advise({status_run("a", 0.5, 0.1, 1.0, 50000), status_run("b", 0.5, 0.1, 1.0, 50000),
                                     status_run("c", 0.5, 0.1, 1.0, 50000)}),
                             "status-refresh");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].subject, "/home/u/repo");
  EXPECT_EQ(found[0].fix, "git -C '/home/u/repo' config core.fsmonitor true");
  EXPECT_NE(found[0].cannot_see.find("trace2.configParams 'core.fsmonitor,core.untrackedCache'"), std::string::npos);
  EXPECT_NE(found[0].evidence.find("50000 index entries"), std::string::npos) << found[0].evidence;

  EXPECT_TRUE(of_rule(advise({status_run("a", 0.5, 0.1, 1.0, 9000), status_run("b", 0.5, 0.1, 1.0, 9000),
                              status_run("c", 0.5, 0.1, 1.0, 9000)}),
                      "status-refresh")
                  .empty())
      << "9,000 entries: not large";
  GitRun on = status_run("a", 0.5, 0.1, 1.0, 50000);
  on.param("core.fsmonitor", "true");
  EXPECT_TRUE(of_rule(advise({on, status_run("b", 0.5, 0.1, 1.0, 50000), status_run("c", 0.5, 0.1, 1.0, 50000)}),
                      "status-refresh")
                  .empty())
      << "fsmonitor is on";
  GitRun hook = status_run("a", 0.5, 0.1, 1.0, 50000);
  hook.param("core.fsmonitor", ".git/hooks/fsmonitor-watchman");
  EXPECT_TRUE(
      of_rule(advise({hook, status_run("b", 0.5, 0.1, 1.0, 50000), status_run("c", 0.5, 0.1, 1.0, 50000)}),
              "status-refresh")
          .empty())
      << "a hook is a monitor too";
  GitRun off = status_run("a", 0.5, 0.1, 1.0, 50000);
  off.param("core.fsmonitor", "false");
  const auto seen_off = of_rule(
      advise({off, status_run("b", 0.5, 0.1, 1.0, 50000), status_run("c", 0.5, 0.1, 1.0, 50000)}), "status-refresh");
  ASSERT_EQ(seen_off.size(), 1u);
  EXPECT_EQ(seen_off[0].cannot_see, "");
}

TEST_F(AdviceRules, StatusUntrackedNeedsThirtyPercentAndATenthOfASecond) {
  const auto found = of_rule(advise({status_run("a", 0.1, 0.5, 1.0, 100), status_run("b", 0.1, 0.5, 1.0, 100),
                                     status_run("c", 0.1, 0.5, 1.0, 100)}),
                             "status-untracked");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix, "git -C '/home/u/repo' config core.untrackedCache true");
  EXPECT_TRUE(of_rule(advise({status_run("a", 0.01, 0.04, 0.08, 100), status_run("b", 0.01, 0.04, 0.08, 100),
                              status_run("c", 0.01, 0.04, 0.08, 100)}),
                      "status-untracked")
                  .empty())
      << "a status of 80 ms is not slow";
  EXPECT_TRUE(of_rule(advise({status_run("a", 0.1, 0.2, 1.0, 100), status_run("b", 0.1, 0.2, 1.0, 100),
                              status_run("c", 0.1, 0.2, 1.0, 100)}),
                      "status-untracked")
                  .empty())
      << "20% of the time";
}

GitRun fetch_over_ssh(const std::string& sid, double connect, double probe) {
  GitRun run{sid, "fetch", 1.0};
  run.child(0, R"("child_class":"?","use_shell":false,"argv":["my-ssh","-G","git.example.com"])", 0.01, probe);
  run.child(1,
            R"("child_class":"transport/ssh","use_shell":false,)"
            R"("argv":["my-ssh","git.example.com","git-upload-pack 'r.git'"])",
            0.02 + probe, 0.9 - probe);
  run.data("transfer", "negotiated-version", "2", 0.02 + probe + connect);
  return run;
}

TEST_F(AdviceRules, SshConnectIsTheTimeToTheServersFirstAnswer) {
  const auto found = advise({fetch_over_ssh("a", 0.5, 0.05), fetch_over_ssh("b", 0.4, 0.05),
                             fetch_over_ssh("c", 0.3, 0.05)});
  const auto connect = of_rule(found, "ssh-connect");
  ASSERT_EQ(connect.size(), 1u);
  EXPECT_EQ(connect[0].subject, "ssh git.example.com");
  EXPECT_NEAR(connect[0].median_seconds, 0.4, 1e-3);
  EXPECT_TRUE(of_rule(found, "ssh-variant-probe").empty()) << "a 50 ms probe";
  EXPECT_TRUE(of_rule(advise({fetch_over_ssh("a", 0.1, 0.05), fetch_over_ssh("b", 0.1, 0.05),
                              fetch_over_ssh("c", 0.1, 0.05)}),
                      "ssh-connect")
                  .empty());
}

TEST_F(AdviceRules, SshVariantProbeIsTheMinusGChildBeforeTheConnection) {
  const auto found = of_rule(advise({fetch_over_ssh("a", 0.1, 0.3), fetch_over_ssh("b", 0.1, 0.3),
                                     fetch_over_ssh("c", 0.1, 0.3)}),
                             "ssh-variant-probe");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].subject, "ssh probe my-ssh");
  EXPECT_EQ(found[0].fix, "git config --global ssh.variant ssh");
}

// `git ci` (alias.ci = commit): the alias's process runs `git commit` as
// its child session, whose hook the user waits for.
std::vector<GitRun> aliased_commit(const std::string& sid, double hook_seconds) {
  GitRun alias{sid, "_run_git_alias_", 1.2};
  alias.typed = "ci";
  alias.child(0, R"("child_class":"git_alias","use_shell":false,"argv":["git","commit"])", 0.01, 1.1);
  GitRun commit = commit_with_hook(sid + "/commit", hook_seconds, 1.0);
  return {alias, commit};
}

TEST_F(AdviceRules, ARunIsWhatTheUserRanUnderItsDisplayNameWithTheCostsOfTheGitsUnderIt) {
  std::vector<GitRun> runs;
  for (const char* sid : {"a", "b", "c"}) {
    for (GitRun& run : aliased_commit(sid, 0.5)) {
      runs.push_back(run);
    }
  }
  // Two commits of their own: too few for a finding of `commit`.
  runs.push_back(commit_with_hook("d", 0.5));
  runs.push_back(commit_with_hook("e", 0.5));
  const auto found = of_rule(advise(runs), "slow-hook");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].command, "ci");
  EXPECT_EQ(found[0].runs, 3);
  EXPECT_EQ(found[0].command_runs, 3) << "the commits under the alias are not runs of their own";
  EXPECT_NEAR(found[0].seconds, 1.5, 1e-6);
  EXPECT_NEAR(found[0].command_seconds, 3.6, 1e-6) << "the alias's elapsed time, not its child's";
  EXPECT_NEAR(found[0].share(), 1.5 / 3.6, 1e-6);
  EXPECT_EQ(found[0].sids, (std::vector<std::string>{"a", "b", "c"})) << "the runs the listings show";
  EXPECT_EQ(found[0].fix, "git commit --no-verify") << "the hook's own skip flag";
  EXPECT_NE(found[0].evidence.find("3 of 3 runs of `ci`"), std::string::npos) << found[0].evidence;
  EXPECT_NE(found[0].finding.find("`git ci` waits 0.50 s a run on its pre-commit hook"), std::string::npos)
      << found[0].finding;
}

// `git st` (alias.st = status): the status rules read the regions, data and
// settings of git's status under the alias, and name the alias.
TEST_F(AdviceRules, StatusUnderAnAliasIsFoundUnderTheAliasWithItsSettings) {
  const auto aliased = [](const std::string& sid, const std::string& monitor) {
    GitRun alias{sid, "_run_git_alias_", 1.1};
    alias.typed = "st";
    alias.worktree = "/home/u/big";
    alias.child(0, R"("child_class":"git_alias","use_shell":false,"argv":["git","status"])", 0.01, 1.05);
    GitRun status = status_run(sid + "/status", 0.5, 0.1, 1.0, 50000);
    if (!monitor.empty()) {
      status.param("core.fsmonitor", monitor);
    }
    return std::vector<GitRun>{alias, status};
  };
  std::vector<GitRun> runs;
  for (const char* sid : {"a", "b", "c"}) {
    for (GitRun& run : aliased(sid, sid == std::string("a") ? "false" : "")) {
      runs.push_back(run);
    }
  }
  const auto found = of_rule(advise(runs), "status-refresh");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].command, "st");
  EXPECT_EQ(found[0].subject, "/home/u/repo") << "the worktree of the status that spent the time";
  EXPECT_EQ(found[0].runs, 3);
  EXPECT_EQ(found[0].sids, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_NE(found[0].finding.find("`git st` in /home/u/repo spends"), std::string::npos) << found[0].finding;
  EXPECT_NE(found[0].evidence.find("50000 index entries"), std::string::npos) << found[0].evidence;
  EXPECT_NE(found[0].evidence.find("core.fsmonitor is reported off"), std::string::npos) << found[0].evidence;

  runs.clear();
  for (const char* sid : {"a", "b", "c"}) {
    for (GitRun& run : aliased(sid, sid == std::string("a") ? "true" : "")) {
      runs.push_back(run);
    }
  }
  EXPECT_TRUE(of_rule(advise(runs), "status-refresh").empty()) << "the status under one alias said fsmonitor is on";
}

TEST_F(AdviceRules, TheWindowLeavesOutOlderRuns) {
  ctl::Window window;
  window.since = proto::format_utc_timestamp(proto::unix_now_us() - 60'000'000);  // the runs are an hour old
  EXPECT_TRUE(advise({commit_with_hook("a", 0.5), commit_with_hook("b", 0.5), commit_with_hook("c", 0.5)}, window)
                  .empty());
}

// Through the restricted database a user without the group gets: the same
// finding for the runs' owner (the trace file's owner), none for another.
TEST_F(AdviceRules, TheRestrictedDatabaseGivesTheOwnerTheSameAdvice) {
  ASSERT_EQ(of_rule(advise({commit_with_hook("a", 0.5), commit_with_hook("b", 0.5), commit_with_hook("c", 0.5)}),
                    "slow-hook")
                .size(),
            1u);
  const std::string own = "--only-uid=" + std::to_string(::getuid());
  ProcessResult r = run_ctl({"--db", m_last_db, own, "--format", "json", "advice", "--since", "-1d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("rule":"slow-hook","command":"commit","subject":"hook pre-commit","runs":3)"),
            std::string::npos)
      << r.out;
  const std::string other = "--only-uid=" + std::to_string(::getuid() + 1);
  r = run_ctl({"--db", m_last_db, other, "--format", "json", "advice", "--since", "-1d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("slow-hook"), std::string::npos) << r.out;
  r = run_ctl({"--db", m_last_db, other, "advice", "--since", "-1d"});
  EXPECT_NE(r.out.find("No advice"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace trace2d::test
