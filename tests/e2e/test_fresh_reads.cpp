// What git just sent is what trace2ctl answers: on a daemon that is not
// busy, the transaction closes as soon as the input goes quiet, so a
// command run right after git (`git status; trace2ctl sessions --last`)
// sees that git, not the one before it.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

TEST(FreshReads, TheGitJustRunIsTheLastSessionTwentyTimesInARow) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo", 3);
  RunningDaemon daemon(dir);
  const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  for (int i = 0; i < 20; ++i) {
    // A pathspec of its own tells each run from the one before.
    const std::string mark = "fresh-" + std::to_string(i);
    ASSERT_EQ(run_git(repo, {"status", "--porcelain", "--", mark}, trace).exit_code, 0);
    const ProcessResult last =
        ctl(daemon.db_path(), {"--format", "tsv", "sql",
                               "SELECT argv, status FROM sessions ORDER BY start_time DESC, id DESC LIMIT 1"});
    ASSERT_EQ(last.exit_code, 0) << last.err;
    EXPECT_NE(last.out.find(mark + "\"]\tcomplete"), std::string::npos) << "run " << i << ":\n" << last.out;
    const ProcessResult listed = ctl(daemon.db_path(), {"--format", "tsv", "sessions", "--last"});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_NE(listed.out.find(mark), std::string::npos) << "run " << i << ":\n" << listed.out;
  }
}

}  // namespace
}  // namespace trace2d::test
