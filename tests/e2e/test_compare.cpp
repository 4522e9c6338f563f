// trace2ctl compare with real git through a real trace2d (issue 25): a
// pre-commit hook made 50 ms slower in one window is found, in `commit`,
// its hook region and its hook child, with its size; the same workload in
// three windows raises no alarm, whichever two are compared.

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "proto/timestamp.hpp"
#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

constexpr int k_runs_per_window = 25;
// Commits run before the first window and not compared: on a freshly
// booted machine, after a warm-up of 2, the first window's commits ran
// 6 ms slower than the next two (a "faster" alarm between identical windows).
constexpr int k_warm_up_commits = 10;

// The hooks a window runs under: one that does nothing, one that sleeps 50 ms.
const std::string k_quick_hook = "#!/bin/sh\nexit 0\n";
const std::string k_slow_hook = "#!/bin/sh\nsleep 0.05\n";

// `chrt -f 10` where this user may use it, else `nice -n -19` (which
// runs the command whatever priority it may take).
const std::vector<std::string>& priority_prefix() {
  static const std::vector<std::string> prefix = [] {
    ProcessSpec probe;
    probe.argv = {"chrt", "-f", "10", "true"};
    return run_process(probe).exit_code == 0 ? std::vector<std::string>{"chrt", "-f", "10"}
                                             : std::vector<std::string>{"nice", "-n", "-19"};
  }();
  return prefix;
}

class CompareWorkload {
 public:
  CompareWorkload() : m_repo(make_repo(m_dir, "repo", 5)), m_daemon(m_dir) {
    // No `git maintenance run --auto` after each commit: fewer processes,
    // less for the host's load to change.
    EXPECT_EQ(run_git(m_repo, {"config", "maintenance.auto", "false"}).exit_code, 0);
  }

  void set_hook(const std::string& script) {
    const std::string hook = m_repo + "/.git/hooks/pre-commit";
    write_file(hook, script);
    ASSERT_EQ(::chmod(hook.c_str(), 0755), 0);
  }

  // `count` commits of one changed file each, traced; returns when they ran.
  void commit(int count) {
    for (int i = 0; i < count; ++i) {
      const ProcessResult r = commit_in(m_repo);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }

  // One commit in `repo` (of this workload's), ahead of the host's other
  // processes: builds and other tests load the host differently from one
  // window to the next, and compare would rightly find git slower on a
  // busier host (docs/trace2ctl.md, "Limits"). Where allowed, git runs
  // under the real-time FIFO policy (the kernel still keeps 5% of each
  // second for the others; git and its hook exit within milliseconds),
  // else at the highest nice priority that is permitted.
  ProcessResult commit_in(const std::string& repo) {
    write_file(std::filesystem::path(repo) / "file0.txt", "change " + std::to_string(m_commits++) + "\n");
    ProcessSpec spec = git_spec(repo, {"commit", "-qam", "change"}, {{"GIT_TRACE2_EVENT", m_daemon.git_target()}});
    const std::vector<std::string> prefix = priority_prefix();
    spec.argv.insert(spec.argv.begin(), prefix.begin(), prefix.end());
    return run_process(spec, std::chrono::seconds(60));
  }

  // Another repository for the same workload, with the same hook.
  std::string add_repo(const std::string& name) {
    const std::string repo = make_repo(m_dir, name, 5);
    EXPECT_EQ(run_git(repo, {"config", "maintenance.auto", "false"}).exit_code, 0);
    std::filesystem::copy_file(m_repo + "/.git/hooks/pre-commit", repo + "/.git/hooks/pre-commit",
                               std::filesystem::copy_options::overwrite_existing);
    return repo;
  }

  [[nodiscard]] std::string compare_args(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--json", "compare"});
    const ProcessResult r = ctl(m_daemon.db_path(), args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.out;
  }

  [[nodiscard]] const std::string& repo() const { return m_repo; }

  // Waits until trace2d has stored every commit, each whole.
  void wait_stored() {
    const std::string expected = std::to_string(m_commits);
    ASSERT_TRUE(wait_until([&] {
      const ProcessResult r =
          ctl(m_daemon.db_path(), {"--format", "tsv", "sql",
                                   "SELECT count(*) FROM sessions WHERE cmd_name = 'commit' AND status = 'complete'"
                                   " AND NOT EXISTS (SELECT 1 FROM sessions WHERE status = 'running')"});
      return r.exit_code == 0 && r.out == "count(*)\n" + expected + "\n";
    })) << m_commits << " commits";
  }

  [[nodiscard]] std::string compare(const std::string& baseline_since, const std::string& baseline_until,
                                    const std::string& target_since, const std::string& target_until,
                                    std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"--json",         "compare",      "--baseline-since", baseline_since,
                                  "--baseline-until", baseline_until, "--target-since",   target_since,
                                  "--target-until", target_until};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = ctl(m_daemon.db_path(), args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.out;
  }

 private:
  TempDir m_dir;
  std::string m_repo;
  RunningDaemon m_daemon;
  int m_commits = 0;
};

std::string now() { return proto::format_utc_timestamp(proto::unix_now_us()); }

struct Row {
  std::string kind;
  std::string command;
  std::string name;
  long long baseline_runs = 0;
  long long target_runs = 0;
  double change = 0;
  double change_low = 0;
  std::string verdict;
};

std::vector<Row> rows_of(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::vector<Row> rows;
  simdjson::dom::array array;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS || doc["rows"].get(array) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not compare's JSON: " << json;
    return rows;
  }
  for (simdjson::dom::element e : array) {
    Row row;
    row.kind = std::string(e["kind"].get_string().value());
    row.command = std::string(e["command"].get_string().value());
    if (!e["name"].is_null()) {
      row.name = std::string(e["name"].get_string().value());
    }
    row.baseline_runs = e["baseline_runs"].get_int64().value();
    row.target_runs = e["target_runs"].get_int64().value();
    if (!e["change"].is_null()) {
      row.change = e["change"].get_double().value();
      row.change_low = e["change_low"].get_double().value();
    }
    row.verdict = std::string(e["verdict"].get_string().value());
    rows.push_back(row);
  }
  return rows;
}

const Row* find(const std::vector<Row>& rows, const std::string& kind, const std::string& command,
                const std::string& name = {}) {
  for (const Row& row : rows) {
    if (row.kind == kind && row.command == command && row.name == name) {
      return &row;
    }
  }
  return nullptr;
}

std::string describe(const std::vector<Row>& rows) {
  std::string text;
  for (const Row& row : rows) {
    text += row.kind + " " + row.command + " " + row.name + ": " + std::to_string(row.baseline_runs) + "/" +
            std::to_string(row.target_runs) + " runs, change " + std::to_string(row.change * 1000) + " ms, " +
            row.verdict + "\n";
  }
  return text;
}

TEST(Compare, AHookFiftyMillisecondsSlowerIsFoundWithItsSize) {
  CompareWorkload work;
  work.set_hook(k_quick_hook);
  work.commit(k_warm_up_commits);
  const std::string t0 = now();
  work.commit(k_runs_per_window);
  const std::string t1 = now();
  work.set_hook(k_slow_hook);
  work.commit(k_runs_per_window);
  const std::string t2 = now();
  work.wait_stored();

  const std::vector<Row> rows = rows_of(work.compare(t0, t1, t1, t2));
  const std::string all = describe(rows);
  // The commit, the region git times the hook in, and the hook process:
  // each about 50 ms slower (the sleep, and starting `sleep` itself).
  for (const auto& [kind, name] : {std::pair<std::string, std::string>{"command", ""},
                                   {"region", "hook:pre-commit"},
                                   {"child", "hook:pre-commit"}}) {
    const Row* row = find(rows, kind, "commit", name);
    ASSERT_NE(row, nullptr) << kind << " " << name << "\n" << all;
    EXPECT_EQ(row->verdict, "slower") << all;
    EXPECT_EQ(row->baseline_runs, k_runs_per_window) << all;
    EXPECT_EQ(row->target_runs, k_runs_per_window) << all;
    EXPECT_GE(row->change, 0.045) << all;
    EXPECT_LE(row->change, 0.120) << all;
    EXPECT_GE(row->change_low, 0.030) << all;
  }
  // Nothing else changed: no other row is called slower or faster.
  for (const Row& row : rows) {
    if (row.name.empty() ? row.command == "commit" : row.name == "hook:pre-commit") {
      continue;
    }
    EXPECT_TRUE(row.verdict == "no change" || row.verdict == "too few runs") << all;
  }
}

// The three windows follow one another, so a host that slows down between
// them (a CI virtual machine losing CPU time to its neighbours: 6 ms on a
// commit between the first window and the third, once, with git at
// real-time priority) makes git really slower, and compare rightly says so.
// Such a drift seldom comes back in the very next seconds, whereas a false
// alarm of the statistic's own would be raised again on the same workload:
// the windows are run a second time only after an alarm, and the test fails
// if that run raises one too.
TEST(Compare, TheSameWorkloadInThreeWindowsRaisesNoAlarm) {
  CompareWorkload work;
  work.set_hook(k_quick_hook);
  work.commit(k_warm_up_commits);
  // Every pair, with every region and child of every command compared;
  // returns the alarms raised, empty when there were none.
  const auto alarms_in_three_windows = [&work] {
    std::vector<std::string> bounds{now()};
    for (int window = 0; window < 3; ++window) {
      work.commit(k_runs_per_window);
      bounds.push_back(now());
    }
    work.wait_stored();
    std::string alarms;
    for (const auto& [a, b] : {std::pair{0, 1}, std::pair{1, 2}, std::pair{0, 2}}) {
      const std::vector<Row> rows =
          rows_of(work.compare(bounds[a], bounds[a + 1], bounds[b], bounds[b + 1], {"--regions", "all"}));
      const std::string all = describe(rows);
      const Row* commit = find(rows, "command", "commit");
      EXPECT_NE(commit, nullptr) << all;
      EXPECT_NE(find(rows, "region", "commit", "hook:pre-commit"), nullptr) << all;
      const bool alarm = std::any_of(rows.begin(), rows.end(), [](const Row& row) {
        return row.verdict != "no change" && row.verdict != "too few runs";
      });
      if (commit == nullptr || commit->verdict != "no change" || alarm) {
        alarms += "windows " + std::to_string(a) + " and " + std::to_string(b) + "\n" + all;
      }
    }
    return alarms;
  };
  const std::string first = alarms_in_three_windows();
  if (!first.empty()) {
    std::cerr << "an alarm between identical windows; running them again:\n" << first;
    EXPECT_EQ(alarms_in_three_windows(), "") << "and the first time:\n" << first;
  }
}

// The populations taken side by side rather than one after the other: the
// same workload in three repositories, a commit in each in turn.
TEST(Compare, TheSameWorkloadInThreeRepositoriesRaisesNoAlarm) {
  CompareWorkload work;
  work.set_hook(k_quick_hook);
  const std::vector<std::string> repos{work.repo(), work.add_repo("second"), work.add_repo("third")};
  for (int i = -1; i < k_runs_per_window; ++i) {  // the first round warms the caches
    for (const std::string& repo : repos) {
      const ProcessResult r = work.commit_in(repo);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  work.wait_stored();
  for (const auto& [a, b] : {std::pair{0, 1}, std::pair{1, 2}, std::pair{0, 2}}) {
    // git names the worktree by its real path.
    const std::vector<Row> rows = rows_of(work.compare_args(
        {"--baseline-repo", std::filesystem::canonical(repos[a]).string(), "--target-repo",
         std::filesystem::canonical(repos[b]).string(), "--since", "-1h", "--regions", "all"}));
    const std::string all = describe(rows);
    const Row* commit = find(rows, "command", "commit");
    ASSERT_NE(commit, nullptr) << all;
    EXPECT_EQ(commit->baseline_runs, k_runs_per_window + 1) << all;
    EXPECT_EQ(commit->target_runs, k_runs_per_window + 1) << all;
    for (const Row& row : rows) {
      EXPECT_TRUE(row.verdict == "no change" || row.verdict == "too few runs")
          << "repositories " << a << " and " << b << "\n" << all;
    }
  }
}

// What the user ran, under the names the listings show: `git st` (an
// alias of status) and `git submodule status` (git's `_run_dashed_`), not
// the status and submodule--helper git runs for them, unless --all.
TEST(Compare, RunsAreWhatTheUserRanUnderTheNamesTheListingsShow) {
  TempDir dir;
  RunningDaemon daemon(dir);
  const std::string repo = make_repo(dir, "repo", 3);
  ASSERT_EQ(run_git(repo, {"config", "alias.st", "status"}).exit_code, 0);
  const std::map<std::string, std::string> env{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  constexpr int k_runs = 3;
  std::vector<std::string> bounds{now()};
  for (int window = 0; window < 2; ++window) {
    for (int i = 0; i < k_runs; ++i) {
      for (const std::vector<std::string>& args :
           {std::vector<std::string>{"st", "--porcelain"}, std::vector<std::string>{"submodule", "status"}}) {
        const ProcessResult r = run_git(repo, args, env);
        ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
      }
    }
    bounds.push_back(now());
  }
  ASSERT_TRUE(wait_until([&] {
    const ProcessResult r = ctl(daemon.db_path(), {"--format", "tsv", "sql",
                                                   "SELECT count(*) FROM sessions WHERE status = 'complete' AND"
                                                   " cmd_name IN ('_run_git_alias_', '_run_dashed_') AND NOT EXISTS"
                                                   " (SELECT 1 FROM sessions WHERE status = 'running')"});
    return r.exit_code == 0 && r.out == "count(*)\n" + std::to_string(4 * k_runs) + "\n";
  }));
  const auto compare = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"--json",         "compare",  "--baseline-since", bounds[0], "--baseline-until",
                                  bounds[1],        "--target-since", bounds[1],     "--target-until", bounds[2],
                                  "--min-runs",     "2",        "--regions",        "all"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = ctl(daemon.db_path(), args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return rows_of(r.out);
  };
  const std::vector<Row> rows = compare({});
  const std::string shown = describe(rows);
  for (const char* typed : {"st", "submodule"}) {
    const Row* row = find(rows, "command", typed);
    ASSERT_NE(row, nullptr) << typed << "\n" << shown;
    EXPECT_EQ(row->baseline_runs, k_runs) << shown;
    EXPECT_EQ(row->target_runs, k_runs) << shown;
  }
  for (const Row& row : rows) {
    EXPECT_TRUE(row.command == "st" || row.command == "submodule") << shown;
  }

  const std::vector<Row> every = compare({"--all"});
  const std::string every_shown = describe(every);
  for (const char* internal : {"status", "submodule--helper"}) {
    const Row* row = find(every, "command", internal);
    ASSERT_NE(row, nullptr) << internal << "\n" << every_shown;
    EXPECT_GE(row->baseline_runs, k_runs) << every_shown;
  }
  // The status's regions are compared under status, the process they are in.
  EXPECT_NE(find(every, "region", "status", "index:do_read_index"), nullptr) << every_shown;
  EXPECT_EQ(find(every, "region", "st", "index:do_read_index"), nullptr) << every_shown;
  EXPECT_EQ(find(every, "command", "_run_git_alias_"), nullptr) << every_shown;

  // --cmd as the listings take it: the name shown, git's name, a,b or repeated.
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"--cmd", "st,submodule"}, std::vector<std::string>{"--cmd", "st", "--cmd", "submodule"}}) {
    const std::vector<Row> selected = compare(cmd);
    EXPECT_NE(find(selected, "command", "st"), nullptr) << describe(selected);
    EXPECT_NE(find(selected, "command", "submodule"), nullptr) << describe(selected);
  }
  const std::vector<Row> dashed = compare({"--cmd", "_run_dashed_"});
  ASSERT_NE(find(dashed, "command", "submodule"), nullptr) << describe(dashed);
  EXPECT_EQ(find(dashed, "command", "st"), nullptr) << describe(dashed);
}

}  // namespace
}  // namespace trace2d::test
