// trace2ctl advice on what real git sent a real trace2d: for every rule, a
// scenario that shows the cost (a slow hook, a slow credential helper, ...)
// and one that does not; the findings name the runs and the fix.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

// Waits until `db` holds at least `top_level` sessions that no git started
// (the commands the test ran, in any order the daemon took them in), at
// least `total` sessions in all, and none is running. A commit's own
// `git maintenance run --auto` is a session too, so counting all sessions
// alone would stop waiting before the last command the test ran arrived.
bool wait_for_top_level_sessions(const std::string& db, int top_level, int total = 0) {
  return wait_until([&] {
    const ProcessResult r = ctl(db, {"--format", "tsv", "sql",
                                     "SELECT coalesce(sum(parent_sid IS NULL), 0) >= " + std::to_string(top_level) +
                                         " AND count(*) >= " + std::to_string(total) +
                                         " AND coalesce(sum(status = 'running'), 0) = 0 FROM sessions"});
    return r.exit_code == 0 && r.out.substr(r.out.find('\n') + 1) == "1\n";
  }, std::chrono::seconds(30));
}

// The SIDs of the sessions of `cmd`, from the database.
std::set<std::string> sids_of(const std::string& db, const std::string& cmd) {
  const ProcessResult r =
      ctl(db, {"--format", "tsv", "sql", "SELECT sid FROM sessions WHERE cmd_name = '" + cmd + "'"});
  std::set<std::string> sids;
  std::size_t start = r.out.find('\n') + 1;
  while (start < r.out.size()) {
    const std::size_t end = r.out.find('\n', start);
    sids.insert(r.out.substr(start, end - start));
    start = end + 1;
  }
  return sids;
}

// What `advice` printed.
struct Advice {
  std::string json;   // the whole --format json output
  std::string table;  // the whole table output
};

Advice advice(const std::string& db) {
  const ProcessResult json = ctl(db, {"--format", "json", "advice"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const ProcessResult table = ctl(db, {"advice"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  return {json.out, table.out};
}

// The JSON object of the finding of `rule`, or "" when there is none.
std::string finding(const Advice& a, const std::string& rule) {
  const std::string key = "\"rule\":\"" + rule + "\"";
  const std::size_t at = a.json.find(key);
  if (at == std::string::npos) {
    return "";
  }
  // One object a line (the helper's text may hold braces).
  const std::size_t begin = a.json.rfind('\n', at) + 1;
  return a.json.substr(begin, a.json.find('\n', at) - begin);
}

void expect_sids_of(const std::string& f, const std::set<std::string>& sids, std::size_t at_least) {
  std::size_t named = 0;
  for (const std::string& sid : sids) {
    named += f.find('"' + sid + '"') != std::string::npos ? 1 : 0;
  }
  EXPECT_GE(named, at_least) << f;
}

void make_executable(const std::string& path, const std::string& text) {
  write_file(path, text);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

void ok(const ProcessResult& r) { ASSERT_EQ(r.exit_code, 0) << r.err; }

class AdviceTest : public ::testing::Test {
 protected:
  TempDir dir;
  RunningDaemon daemon{dir};
  std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", daemon.git_target()}};
};

// --- slow-hook ---------------------------------------------------------

void commit_three_times(const std::string& repo, const std::map<std::string, std::string>& env) {
  for (int i = 0; i < 3; ++i) {
    write_file(std::filesystem::path(repo) / "file1.txt", "change " + std::to_string(i) + "\n");
    ok(run_git(repo, {"commit", "-qam", "change"}, env));
  }
}

TEST_F(AdviceTest, ASlowPreCommitHookIsFoundWithItsRunsAndTheSkipFlag) {
  const std::string repo = make_repo(dir, "repo", 5);
  make_executable(repo + "/.git/hooks/pre-commit", "#!/bin/sh\nsleep 0.3\n");
  commit_three_times(repo, trace);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  const std::string f = finding(a, "slow-hook");
  ASSERT_NE(f, "") << a.json;
  EXPECT_NE(f.find(R"("command":"commit")"), std::string::npos) << f;
  EXPECT_NE(f.find(R"("subject":"hook pre-commit")"), std::string::npos) << f;
  EXPECT_NE(f.find(R"("runs":3)"), std::string::npos) << f;
  EXPECT_TRUE(std::regex_search(f, std::regex(R"("median_seconds":0\.[3-9])"))) << f;
  EXPECT_NE(f.find(R"("fix":"git commit --no-verify")"), std::string::npos) << f;
  expect_sids_of(f, sids_of(daemon.db_path(), "commit"), 3);
  EXPECT_NE(a.table.find("fix: git commit --no-verify"), std::string::npos) << a.table;
  EXPECT_NE(a.table.find("evidence: 3 of 3 runs of `commit`: the pre-commit hook"), std::string::npos) << a.table;
}

TEST_F(AdviceTest, AFastHookIsNotAFinding) {
  const std::string repo = make_repo(dir, "repo", 5);
  make_executable(repo + "/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
  commit_three_times(repo, trace);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const ProcessResult hooks =
      ctl(daemon.db_path(), {"--format", "tsv", "sql", "SELECT count(*) FROM children WHERE child_class = 'hook'"});
  ASSERT_EQ(hooks.out, "count(*)\n3\n") << "the hook ran each time";
  const Advice a = advice(daemon.db_path());
  EXPECT_EQ(finding(a, "slow-hook"), "") << a.json;
}

// What the user ran, under its name: `git ci` (alias.ci = commit) and `git
// cm` (alias.cm = !git commit, through the shell) run a `git commit` whose
// hook the user waits for; the findings name the aliases and their runs.
TEST_F(AdviceTest, ASlowHookUnderAnAliasIsFoundUnderTheAlias) {
  const std::string repo = make_repo(dir, "repo", 5);
  make_executable(repo + "/.git/hooks/pre-commit", "#!/bin/sh\nsleep 0.3\n");
  ok(run_git(repo, {"config", "alias.ci", "commit"}));
  ok(run_git(repo, {"config", "alias.cm", "!git commit"}));
  for (const std::string alias : {"ci", "cm"}) {
    for (int i = 0; i < 3; ++i) {
      write_file(std::filesystem::path(repo) / "file1.txt", alias + " change " + std::to_string(i) + "\n");
      ok(run_git(repo, {alias, "-qam", "change"}, trace));
    }
  }
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 6, 12));  // each alias's process and its commit
  const Advice a = advice(daemon.db_path());
  for (const auto& [alias, cmd_name] : {std::pair<std::string, std::string>{"ci", "_run_git_alias_"},
                                        {"cm", "_run_shell_alias_"}}) {
    const std::string key = R"("rule":"slow-hook","command":")" + alias + "\"";
    const std::size_t at = a.json.find(key);
    ASSERT_NE(at, std::string::npos) << alias << ": " << a.json;
    const std::size_t begin = a.json.rfind('\n', at) + 1;
    const std::string f = a.json.substr(begin, a.json.find('\n', at) - begin);
    EXPECT_NE(f.find(R"("subject":"hook pre-commit","runs":3,"command_runs":3)"), std::string::npos) << f;
    EXPECT_NE(f.find(R"("fix":"git commit --no-verify")"), std::string::npos) << f;
    EXPECT_NE(f.find("`git " + alias + "` waits 0."), std::string::npos) << f;
    // The SIDs are the aliases' own, the sessions `trace2ctl sessions` lists.
    expect_sids_of(f, sids_of(daemon.db_path(), cmd_name), 3);
    EXPECT_NE(a.table.find("evidence: 3 of 3 runs of `" + alias + "`: the pre-commit hook"), std::string::npos)
        << a.table;
  }
  EXPECT_EQ(a.json.find(R"("command":"commit")"), std::string::npos) << "no commit of the user's own: " << a.json;
}

// --- credential-helper -------------------------------------------------

void fill_credentials(const std::string& repo, const std::string& helper, std::map<std::string, std::string> env) {
  for (int i = 0; i < 3; ++i) {
    ProcessSpec spec = git_spec(repo, {"-c", "credential.helper=" + helper, "credential", "fill"}, env);
    spec.stdin_data = "protocol=https\nhost=example.com\n\n";
    const ProcessResult r = run_process(spec, std::chrono::seconds(60));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_NE(r.out.find("password=b"), std::string::npos) << r.out;
  }
}

TEST_F(AdviceTest, ASlowCredentialHelperIsFoundWithTheCacheInFrontOfIt) {
  const std::string repo = make_repo(dir, "repo", 2);
  const std::string helper = "!f(){ sleep 0.3; echo username=a; echo password=b; }; f";
  fill_credentials(repo, helper, trace);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  const std::string f = finding(a, "credential-helper");
  ASSERT_NE(f, "") << a.json;
  EXPECT_NE(f.find(R"("command":"credential")"), std::string::npos) << f;
  EXPECT_NE(f.find(R"("runs":3)"), std::string::npos) << f;
  EXPECT_NE(f.find("cache --timeout=3600"), std::string::npos) << f;
  // The slow helper stays, after the cache, as credential.helper names it.
  EXPECT_NE(f.find("--add credential.helper '!f(){ sleep 0.3;"), std::string::npos) << f;
  expect_sids_of(f, sids_of(daemon.db_path(), "credential"), 3);
}

TEST_F(AdviceTest, AFastCredentialHelperIsNotAFinding) {
  const std::string repo = make_repo(dir, "repo", 2);
  fill_credentials(repo, "!f(){ echo username=a; echo password=b; }; f", trace);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  EXPECT_EQ(finding(a, "credential-helper"), "") << a.json;
}

// --- foreground-maintenance --------------------------------------------

// A repository where `gc --auto` always has work, and work that takes
// well over the rule's 0.25 s: with gc.auto=1, two loose objects under
// objects/17 are too many, and 2,000 unreachable blobs (which gc keeps for
// two weeks) put several there; 80,000 commits on a branch of their own
// are what each gc walks (repack, prune) and writes a commit-graph of.
// (12,000 loose blobs and no history took 0.24 s on a quiet 2-core host,
// under the rule's threshold; this history takes 0.85 to 1.3 s there, and
// fast-import writes it in about 5 s.)
std::string repo_needing_gc(const TempDir& dir) {
  const std::string repo = make_repo(dir, "repo", 2);
  std::string history;
  constexpr int k_commits = 80000;
  history.reserve(static_cast<std::size_t>(k_commits) * 110);
  for (int i = 1; i <= k_commits; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    history += "commit refs/heads/history\nmark :" + std::to_string(i) + "\ncommitter a <a@example.com> " +
               std::to_string(1700000000 + i) + " +0000\ndata 1\nc\n";
    if (i > 1) {
      history += "from :" + std::to_string(i - 1) + "\n";
    }
    history += "M 100644 inline f\ndata " + std::to_string(line.size()) + "\n" + line + "\n";
  }
  ProcessSpec import = git_spec(repo, {"fast-import", "--quiet"});
  import.stdin_data = std::move(history);
  const ProcessResult imported = run_process(import, std::chrono::seconds(300));
  if (imported.exit_code != 0) {
    throw std::runtime_error("git fast-import failed (" + std::to_string(imported.exit_code) + "): " + imported.err);
  }
  const std::filesystem::path blobs = dir.file("blobs");
  std::filesystem::create_directories(blobs);
  std::string paths;
  for (int i = 0; i < 2000; ++i) {
    const std::filesystem::path blob = blobs / std::to_string(i);
    write_file(blob, "blob " + std::to_string(i) + "\n");
    paths += blob.string() + "\n";
  }
  ProcessSpec spec = git_spec(repo, {"hash-object", "-w", "--stdin-paths"});
  spec.stdin_data = paths;
  // Set-up steps: their limits only guard against a hang.
  const ProcessResult hashed = run_process(spec, std::chrono::seconds(300));
  if (hashed.exit_code != 0) {
    throw std::runtime_error("git hash-object failed (" + std::to_string(hashed.exit_code) + "): " + hashed.err);
  }
  return repo;
}

TEST_F(AdviceTest, GcInTheForegroundOfCommitIsFoundOnceWithMaintenanceStart) {
  const std::string repo = repo_needing_gc(dir);
  std::map<std::string, std::string> env = trace;
  env["GIT_CONFIG_PARAMETERS"] = "'gc.auto'='1' 'gc.autodetach'='false'";
  for (int i = 0; i < 2; ++i) {
    write_file(std::filesystem::path(repo) / "file1.txt", "change " + std::to_string(i) + "\n");
    ok(run_git(repo, {"commit", "-qam", "change"}, env));
  }
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 2));
  const Advice a = advice(daemon.db_path());
  const std::string f = finding(a, "foreground-maintenance");
  ASSERT_NE(f, "") << a.json;
  EXPECT_NE(f.find(R"("command":"commit")"), std::string::npos) << f;
  EXPECT_NE(f.find(R"("subject":"git maintenance run --auto")"), std::string::npos) << f;
  EXPECT_NE(f.find(R"("runs":2)"), std::string::npos) << f;
  EXPECT_NE(f.find("maintenance start"), std::string::npos) << f;
  expect_sids_of(f, sids_of(daemon.db_path(), "commit"), 2);
  // Once: the gc under `maintenance run --auto` is the same wait.
  EXPECT_EQ(a.json.find("foreground-maintenance"), a.json.rfind("foreground-maintenance")) << a.json;
}

TEST_F(AdviceTest, GcDetachedFromCommitIsNotAFinding) {
  const std::string repo = repo_needing_gc(dir);
  std::map<std::string, std::string> env = trace;
  env["GIT_CONFIG_PARAMETERS"] = "'gc.auto'='1'";
  for (int i = 0; i < 2; ++i) {
    write_file(std::filesystem::path(repo) / "file1.txt", "change " + std::to_string(i) + "\n");
    ok(run_git(repo, {"commit", "-qam", "change"}, env));
  }
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 2));
  // The detached gc goes on after commit: wait for it too.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 2));
  const Advice a = advice(daemon.db_path());
  EXPECT_EQ(finding(a, "foreground-maintenance"), "") << a.json;
}

// --- status-refresh and status-untracked -------------------------------

// A repository of `dirs` directories with `files` files each, committed.
std::string tree_repo(const TempDir& dir, const std::string& name, int dirs, int files) {
  const std::filesystem::path repo = dir.file(name);
  std::filesystem::create_directories(repo);
  for (int d = 0; d < dirs; ++d) {
    const std::filesystem::path sub = repo / ("d" + std::to_string(d));
    std::filesystem::create_directories(sub);
    for (int f = 0; f < files; ++f) {
      write_file(sub / ("f" + std::to_string(f)), std::to_string(d * files + f) + "\n");
    }
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"init", "-q", "-b", "main"}, std::vector<std::string>{"add", "-A"},
        std::vector<std::string>{"commit", "-qm", "tree"}}) {
    if (run_git(repo.string(), args).exit_code != 0) {
      throw std::runtime_error("git " + args[0] + " failed");
    }
  }
  settle_repo(repo.string());
  write_file(repo / "untracked.txt", "new\n");
  return repo.string();
}

void status_three_times(const std::string& repo, const std::map<std::string, std::string>& env) {
  for (int i = 0; i < 3; ++i) {
    ok(run_git(repo, {"status", "--porcelain"}, env));
  }
}

// Each status run's time and the part of it in the index refresh, for a
// failure's message: the rule's thresholds are about time, and a machine
// whose lstat is fast shows why it found nothing.
std::string status_times(const std::string& db) {
  return ctl(db, {"--format", "tsv", "sql",
                  "SELECT s.sid, s.elapsed, (SELECT sum(r.elapsed) FROM regions r WHERE r.sid = s.sid AND"
                  " r.category = 'index' AND r.label IN ('preload', 'refresh')) AS refresh FROM sessions s"
                  " WHERE s.cmd_name = 'status'"})
      .out;
}

// How fast a status of 50,000 clean entries is depends on the machine's
// lstat: 0.11-0.16 s here, 0.09 s on CI's machine, under the rule's 0.1 s.
// So the index is made older than every file: each entry is "racily clean"
// and its content is read and hashed in the refresh, and with optional
// locks off (as IDEs run status) no run rewrites the index to end that.
// A status then takes 0.5 s here, 90% of it in the refresh: the rule's
// thresholds hold with room on any machine.
TEST_F(AdviceTest, StatusOfALargeWorktreeIsFoundSpendingItsTimeInRefresh) {
  const std::string repo = tree_repo(dir, "large", 1, 50000);
  const std::filesystem::path index = std::filesystem::path(repo) / ".git" / "index";
  std::filesystem::last_write_time(index, std::filesystem::last_write_time(index) - std::chrono::hours(2));
  std::map<std::string, std::string> env = trace;
  env["GIT_OPTIONAL_LOCKS"] = "0";
  status_three_times(repo, env);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  const std::string f = finding(a, "status-refresh");
  ASSERT_NE(f, "") << a.json << "\n" << status_times(daemon.db_path());
  EXPECT_NE(f.find(R"("command":"status")"), std::string::npos) << f;
  EXPECT_NE(f.find(R"("subject":")" + repo + "\""), std::string::npos) << f;
  EXPECT_NE(f.find("50000 index entries"), std::string::npos) << f;
  EXPECT_NE(f.find("config core.fsmonitor true"), std::string::npos) << f;
  // No run said whether fsmonitor is on: the finding says so, and how to let it.
  EXPECT_NE(f.find("trace2.configParams 'core.fsmonitor,core.untrackedCache'"), std::string::npos) << f;
  expect_sids_of(f, sids_of(daemon.db_path(), "status"), 3);
}

TEST_F(AdviceTest, StatusOfASmallWorktreeIsNotAFinding) {
  const std::string repo = tree_repo(dir, "small", 5, 10);
  status_three_times(repo, trace);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  EXPECT_EQ(finding(a, "status-refresh"), "") << a.json;
  EXPECT_EQ(finding(a, "status-untracked"), "") << a.json;
}

// One wide repository (slow to make), two daemons: the untracked cache off
// for one, on for the other.
TEST_F(AdviceTest, StatusReadingManyDirectoriesIsFoundUnlessTheUntrackedCacheIsOn) {
  // 16,000 directories: git 2.39 reads 8,000 in 0.09 s on a fast host, under the rule's 0.1 s median.
  const std::string repo = tree_repo(dir, "wide", 16000, 1);
  std::map<std::string, std::string> env = trace;
  env["GIT_TRACE2_CONFIG_PARAMS"] = "core.untrackedCache";
  env["GIT_CONFIG_PARAMETERS"] = "'core.untrackedcache'='false'";
  status_three_times(repo, env);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  const std::string f = finding(a, "status-untracked");
  ASSERT_NE(f, "") << a.json;
  EXPECT_NE(f.find(R"("subject":")" + repo + "\""), std::string::npos) << f;
  EXPECT_NE(f.find("config core.untrackedCache true"), std::string::npos) << f;
  // The runs said it is off: nothing unseen.
  EXPECT_NE(f.find("core.untrackedCache is reported off"), std::string::npos) << f;
  EXPECT_NE(f.find(R"("cannot_see":null)"), std::string::npos) << f;
  expect_sids_of(f, sids_of(daemon.db_path(), "status"), 3);
  EXPECT_EQ(finding(a, "status-refresh"), "") << "8,000 entries are not a large index: " << a.json;

  TempDir other_dir;
  RunningDaemon other(other_dir);
  env["GIT_TRACE2_EVENT"] = other.git_target();
  env["GIT_CONFIG_PARAMETERS"] = "'core.untrackedcache'='true'";
  status_three_times(repo, env);
  ASSERT_TRUE(wait_for_top_level_sessions(other.db_path(), 3));
  const Advice with_cache = advice(other.db_path());
  EXPECT_EQ(finding(with_cache, "status-untracked"), "") << with_cache.json;
  EXPECT_NE(with_cache.table.find("No advice"), std::string::npos) << with_cache.table;
}

// --- ssh-connect and ssh-variant-probe ---------------------------------

// A stand-in for ssh that runs the remote command here, after `connect`
// seconds; asked `-G` (git's probe of which SSH it is), after `probe`.
std::string fake_ssh(const TempDir& dir, const std::string& connect, const std::string& probe) {
  const std::string path = dir.file("fake-ssh");
  make_executable(path, "#!/bin/sh\n"
                        "if [ \"$1\" = -G ]; then sleep " + probe + "; exit 0; fi\n"
                        "sleep " + connect + "\n"
                        "while [ $# -gt 1 ]; do shift; done\n"
                        "exec sh -c \"$1\"\n");
  return path;
}

void fetch_three_times(const TempDir& dir, const std::string& ssh, std::map<std::string, std::string> env) {
  const std::string clone = clone_behind(dir);
  env["GIT_SSH_COMMAND"] = ssh;
  for (int i = 0; i < 3; ++i) {
    ok(run_git(clone, {"fetch", "-q", "ssh://example.invalid" + dir.file("upstream"), "main"}, env));
  }
}

TEST_F(AdviceTest, ASlowSshConnectionIsFoundWithConnectionSharing) {
  fetch_three_times(dir, fake_ssh(dir, "0.4", "0"), trace);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  const std::string f = finding(a, "ssh-connect");
  ASSERT_NE(f, "") << a.json;
  EXPECT_NE(f.find(R"("command":"fetch")"), std::string::npos) << f;
  EXPECT_NE(f.find(R"("subject":"ssh example.invalid")"), std::string::npos) << f;
  EXPECT_TRUE(std::regex_search(f, std::regex(R"("median_seconds":0\.[4-9])"))) << f;
  EXPECT_NE(f.find("ControlMaster=auto"), std::string::npos) << f;
  expect_sids_of(f, sids_of(daemon.db_path(), "fetch"), 3);
  EXPECT_EQ(finding(a, "ssh-variant-probe"), "") << "the probe was quick: " << a.json;
}

TEST_F(AdviceTest, AQuickSshConnectionIsNotAFinding) {
  fetch_three_times(dir, fake_ssh(dir, "0", "0"), trace);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  EXPECT_EQ(finding(a, "ssh-connect"), "") << a.json;
}

TEST_F(AdviceTest, ASlowSshVariantProbeIsFoundWithSshVariant) {
  fetch_three_times(dir, fake_ssh(dir, "0", "0.3"), trace);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  const std::string f = finding(a, "ssh-variant-probe");
  ASSERT_NE(f, "") << a.json;
  EXPECT_NE(f.find(R"("command":"fetch")"), std::string::npos) << f;
  EXPECT_NE(f.find(R"("fix":"git config --global ssh.variant ssh")"), std::string::npos) << f;
  expect_sids_of(f, sids_of(daemon.db_path(), "fetch"), 3);
}

TEST_F(AdviceTest, NoProbeWhenGitKnowsTheSshVariant) {
  std::map<std::string, std::string> env = trace;
  env["GIT_CONFIG_PARAMETERS"] = "'ssh.variant'='ssh'";
  fetch_three_times(dir, fake_ssh(dir, "0", "0.3"), env);
  ASSERT_TRUE(wait_for_top_level_sessions(daemon.db_path(), 3));
  const Advice a = advice(daemon.db_path());
  EXPECT_EQ(finding(a, "ssh-variant-probe"), "") << a.json;
}

}  // namespace
}  // namespace trace2d::test
