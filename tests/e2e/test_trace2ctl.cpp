// trace2ctl as a user meets it (issue 14): --follow while git runs, CSV that
// Python reads back, a hook's git argv in `tree`, shell completion that bash
// loads, man pages that man renders. Real git, a real trace2d, real SQLite.

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

bool has_program(const std::string& name) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "command -v " + name};
  return run_process(spec).exit_code == 0;
}

TEST(Trace2ctl, FollowPrintsAGitRunThatHappensWhileItRuns) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo", 3);
  RunningDaemon daemon(dir);
  const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  ASSERT_EQ(run_git(repo, {"log", "-1"}, trace).exit_code, 0);  // before: not followed
  ASSERT_TRUE(wait_for_sessions(daemon.db_path(), 1));

  ProcessSpec spec;
  spec.argv = {TRACE2CTL_BIN, "--db", daemon.db_path(), "--format", "csv", "sessions", "--follow", "--limit", "0",
               "--cmd", "status"};
  Process follow(spec);
  ASSERT_TRUE(wait_until([&] { return follow.out_so_far().find("sid,start_time") == 0; })) << follow.err_so_far();
  // command, cmd_name, repository, status, exit_code (docs/trace2ctl.md).
  const std::string status_row = ",status,status," + repo + ",complete,0,";
  EXPECT_EQ(follow.out_so_far().find(status_row), std::string::npos) << "nothing yet";

  ASSERT_EQ(run_git(repo, {"rev-parse", "HEAD"}, trace).exit_code, 0);  // filtered out by --cmd
  ASSERT_EQ(run_git(repo, {"status", "--short"}, trace).exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return follow.out_so_far().find(status_row) != std::string::npos; }))
      << follow.out_so_far() << follow.err_so_far();
  // Once, with its argv, and nothing that --cmd leaves out.
  const std::string out = follow.out_so_far();
  EXPECT_NE(out.find(R"("[""git"",""status"",""--short""]")"), std::string::npos) << out;
  EXPECT_EQ(out.find("rev-parse"), std::string::npos) << out;
  EXPECT_EQ(out.find(status_row), out.rfind(status_row)) << out;

  follow.signal(SIGINT);
  const ProcessResult result = follow.wait(std::chrono::seconds(10));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
}

TEST(Trace2ctl, CsvAndTsvReadBackInPython) {
  if (!has_program("python3")) {
    GTEST_SKIP() << "python3 is not installed (.ci/deps installs it)";
  }
  TempDir dir;
  const std::string repo = make_repo(dir, "repo", 3);
  RunningDaemon daemon(dir);
  // An argument with a comma, quotes, a tab and a newline: git fails on it
  // (exit 128), so the run is also a failed one.
  const std::string nasty = "no,such \"ref\"\twith\nnewline";
  EXPECT_EQ(run_git(repo, {"rev-parse", "--verify", nasty}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code,
            128);
  ASSERT_TRUE(wait_for_sessions(daemon.db_path(), 1));

  for (const std::string format : {"csv", "tsv"}) {
    const ProcessResult listed = ctl(daemon.db_path(), {"--format", format, "sessions", "--failed"});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    const std::string file = dir.file("sessions." + format);
    write_file(file, listed.out);
    // Python's csv module reads the file back to the very bytes of argv.
    const std::string script = R"(
import csv, json, sys
path, fmt, nasty = sys.argv[1], sys.argv[2], sys.argv[3]
with open(path, newline='') as f:
    if fmt == 'csv':
        rows = list(csv.DictReader(f))
    else:
        # TSV: tab-separated, no quoting; \t \n \r \\ escaped in values.
        lines = f.read().split('\n')[:-1]
        unescape = lambda v: v.replace('\\\\', '\0').replace('\\t', '\t').replace('\\n', '\n').replace('\\r', '\r').replace('\0', '\\')
        header = lines[0].split('\t')
        rows = [dict(zip(header, map(unescape, line.split('\t')))) for line in lines[1:]]
assert len(rows) == 1, rows
row = rows[0]
assert row['cmd_name'] == 'rev-parse', row
assert row['exit_code'] == '128', row
assert json.loads(row['argv'])[-1] == nasty, row['argv']
assert float(row['elapsed']) > 0, row
print('ok')
)";
    ProcessSpec python;
    python.argv = {"python3", "-c", script, file, format, nasty};
    const ProcessResult checked = run_process(python);
    EXPECT_EQ(checked.exit_code, 0) << format << ": " << checked.err << "\n" << listed.out;
    EXPECT_EQ(checked.out, "ok\n");
  }
}

TEST(Trace2ctl, TreeShowsTheArgvOfAGitThatAHookRan) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo", 3);
  const std::string hook = repo + "/.git/hooks/pre-commit";
  write_file(hook, "#!/bin/sh\ngit rev-parse --abbrev-ref HEAD >/dev/null\n");
  std::filesystem::permissions(hook, std::filesystem::perms::owner_all);
  write_file(repo + "/new.txt", "new\n");
  ASSERT_EQ(run_git(repo, {"add", "new.txt"}).exit_code, 0);
  RunningDaemon daemon(dir);
  const ProcessResult commit =
      run_git(repo, {"commit", "-qm", "with hook"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(commit.exit_code, 0) << commit.err;
  ASSERT_TRUE(wait_for_sessions(daemon.db_path(), 2));

  const ProcessResult tree = ctl(daemon.db_path(), {"tree", "--last", "--cmd", "commit", "--no-times"});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_TRUE(std::regex_search(tree.out, std::regex("child 0 hook pre-commit: [^\n]*pre-commit  \\[pid \\d+, exit 0\\]\n"
                                                     "[│ ]*└─ rev-parse  git rev-parse --abbrev-ref HEAD  \\[pid")))
      << tree.out;
  // The latest run of a command, top-level or not.
  const ProcessResult rev_parse = ctl(daemon.db_path(), {"tree", "--last", "--cmd", "rev-parse", "--no-times"});
  ASSERT_EQ(rev_parse.exit_code, 0) << rev_parse.err;
  EXPECT_EQ(rev_parse.out.rfind("rev-parse  git rev-parse --abbrev-ref HEAD  [pid ", 0), 0u) << rev_parse.out;
}

TEST(Trace2ctl, DiagnosesTheDatabaseFileAndBadNumbers) {
  TempDir dir;
  RunningDaemon daemon(dir);
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(daemon.db_path() + "-shm"); }));

  // A plain text file, a foreign SQLite file: named as what they are.
  const std::string script = dir.file("workload.sh");
  write_file(script, "#!/bin/sh\ngit status\n");
  const ProcessResult text = ctl(script, {"sessions"});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.err.find("is not an SQLite database"), std::string::npos) << text.err;
  const ProcessResult limit = ctl(daemon.db_path(), {"sessions", "--limit", "-1"});
  EXPECT_EQ(limit.exit_code, 2);
  EXPECT_EQ(limit.err.find("not in range"), std::string::npos) << limit.err;
  EXPECT_NE(limit.err.find("--limit: '-1' is not a whole number of 0 or more"), std::string::npos) << limit.err;

  // A database the user may read, with a -shm it may not: the -shm is named.
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to run trace2ctl as another user";
  }
  namespace fs = std::filesystem;
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(daemon.db_path(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                        fs::perms::others_read);
  fs::permissions(daemon.db_path() + "-wal", fs::perms::owner_read | fs::perms::owner_write |
                                                 fs::perms::group_read | fs::perms::others_read);
  fs::permissions(daemon.db_path() + "-shm", fs::perms::owner_read | fs::perms::owner_write);
  ProcessSpec spec;
  spec.argv = {TRACE2CTL_BIN, "--db", daemon.db_path(), "sessions"};
  spec.run_as = nobody();
  const ProcessResult shm = run_process(spec);
  EXPECT_EQ(shm.exit_code, 1);
  EXPECT_NE(shm.err.find("cannot read '" + daemon.db_path() + "-shm' (Permission denied)"), std::string::npos)
      << shm.err;
  EXPECT_EQ(shm.err.find("SELECT"), std::string::npos) << "no internal SQL: " << shm.err;
  EXPECT_NE(shm.err.find("sudo usermod -aG trace2d $USER"), std::string::npos) << "what to do: " << shm.err;
}

// The flags `trace2ctl <command> --help` lists.
std::set<std::string> help_flags(const std::vector<std::string>& command) {
  ProcessSpec spec;
  spec.argv = {TRACE2CTL_BIN};
  spec.argv.insert(spec.argv.end(), command.begin(), command.end());
  spec.argv.push_back("--help");
  const std::string help = run_process(spec).out;
  std::set<std::string> flags;
  const std::regex flag("(^|[ ,])(--[a-z][a-z0-9-]*)");  // --slow-p99: digits too
  for (auto it = std::sregex_iterator(help.begin(), help.end(), flag); it != std::sregex_iterator(); ++it) {
    flags.insert((*it)[2]);
  }
  flags.erase("--help");
  flags.erase("--version");
  return flags;
}

TEST(Trace2ctl, BashCompletionLoadsAndOffersEveryFlag) {
  const std::string script = std::string(TRACE2D_SOURCE_DIR) + "/ctl/completion/trace2ctl.bash";
  ProcessSpec load;
  load.argv = {"bash", "-c", "source \"$0\" && complete -p trace2ctl", script};
  const ProcessResult loaded = run_process(load);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
  EXPECT_EQ(loaded.out, "complete -F _trace2ctl trace2ctl\n");
  EXPECT_EQ(loaded.err, "");

  // What it offers after `trace2ctl COMMAND --`, against what --help lists.
  const auto offered = [&](const std::string& words) {
    ProcessSpec spec;
    spec.argv = {"bash", "-c",
                 "source \"$0\"; COMP_WORDS=(" + words + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _trace2ctl; "
                 "printf '%s\\n' \"${COMPREPLY[@]}\"",
                 script};
    const ProcessResult r = run_process(spec);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> words_out;
    std::size_t start = 0;
    for (std::size_t end; (end = r.out.find('\n', start)) != std::string::npos; start = end + 1) {
      words_out.insert(r.out.substr(start, end - start));
    }
    return words_out;
  };
  EXPECT_TRUE(offered("trace2ctl se").count("sessions")) << "command names";
  EXPECT_TRUE(offered("trace2ctl --format ''").count("csv")) << "format values";
  for (const std::string command :
       {"sessions", "show", "sql", "stats", "status", "top", "tree", "export", "report", "compare"}) {
    const std::set<std::string> expected = help_flags({command});
    const std::set<std::string> got = offered("trace2ctl " + command + " --");
    for (const std::string& flag : expected) {
      EXPECT_TRUE(got.count(flag)) << command << " " << flag << " is not completed";
    }
  }
  for (const std::string& flag : help_flags({})) {
    EXPECT_TRUE(offered("trace2ctl --").count(flag)) << flag << " is not completed";
  }
}

TEST(Trace2ctl, ZshCompletionParsesAndCompinitBindsIt) {
  if (!has_program("zsh")) {
    GTEST_SKIP() << "zsh is not installed (.ci/deps installs it)";
  }
  const std::string dir = std::string(TRACE2D_SOURCE_DIR) + "/ctl/completion";
  ProcessSpec syntax;
  syntax.argv = {"zsh", "-n", dir + "/_trace2ctl"};
  const ProcessResult parsed = run_process(syntax);
  EXPECT_EQ(parsed.exit_code, 0) << parsed.err;
  // As from the installed share/zsh/site-functions: compinit finds the
  // #compdef line and binds the function to the command.
  ProcessSpec spec;
  spec.argv = {"zsh", "-f", "-c", "fpath=(\"$0\" $fpath); autoload -U compinit; compinit -u -D; print -r -- ${_comps[trace2ctl]}",
               dir};
  const ProcessResult bound = run_process(spec);
  EXPECT_EQ(bound.exit_code, 0) << bound.err;
  EXPECT_EQ(bound.out, "_trace2ctl\n") << bound.err;
}

TEST(Trace2ctl, ManPagesRenderWithMan) {
  if (!has_program("man")) {
    GTEST_SKIP() << "man is not installed (.ci/deps installs man-db)";
  }
  for (const auto& [page, must_hold] : std::vector<std::pair<std::string, std::string>>{
           {"trace2ctl.1", "--follow"}, {"trace2d.8", "GIT_TRACE2_EVENT"}, {"trace2d.toml.5", "commit_interval_ms"}}) {
    ProcessSpec spec;
    spec.argv = {"man", "--warnings", "-l", std::string(TRACE2D_MAN_DIR) + "/" + page};
    spec.env = {{"MANWIDTH", "100"}, {"MANPAGER", "cat"}, {"PAGER", "cat"}};
    const ProcessResult r = run_process(spec);
    EXPECT_EQ(r.exit_code, 0) << page << ": " << r.err;
    EXPECT_EQ(r.err, "") << page << ": groff warnings";
    EXPECT_NE(r.out.find("NAME"), std::string::npos) << page;
    EXPECT_NE(r.out.find(must_hold), std::string::npos) << page;
  }
}

}  // namespace
}  // namespace trace2d::test
