// Trace directories: git writes a file per process; trace2d tails, ingests,
// commits the position with the events, and removes finished files.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

namespace fs = std::filesystem;

// Lines of the captured traces with their SIDs replaced, so that many
// distinct processes can be written from one corpus.
std::vector<std::string> trace_lines(const std::string& sid, int variant) {
  const std::string source = std::string(TRACE2D_TEST_DATA) + "/traces/" +
                             (variant % 2 == 0 ? "status.jsonl" : "diff.jsonl");
  std::ifstream in(source);
  std::vector<std::string> lines;
  std::string line;
  std::string original;
  while (std::getline(in, line)) {
    const auto begin = line.find("\"sid\":\"") + 7;
    const auto end = line.find('"', begin);
    if (original.empty()) {
      original = line.substr(begin, end - begin);
    }
    if (line.substr(begin, end - begin) == original) {  // the top-level process only
      lines.push_back(line.substr(0, begin) + sid + line.substr(end) + "\n");
    }
  }
  return lines;
}

std::map<std::string, long> stored_counts(const std::string& db_path) {
  db::Database db = open_db(db_path);
  db::Statement stmt = db.prepare("SELECT sid, count(*) FROM events GROUP BY sid");
  std::map<std::string, long> counts;
  while (stmt.step()) {
    counts[std::string(stmt.column_text(0))] = stmt.column_int(1);
  }
  return counts;
}

class DirTest : public ::testing::Test {
 protected:
  TempDir m_dir;
  std::string m_watched = m_dir.file("traces");

  void SetUp() override { fs::create_directories(m_watched); }
};

TEST_F(DirTest, SigkillMidIngestLosesAndDuplicatesNothing) {
  constexpr int k_files = 3000;
  std::map<std::string, long> expected;
  // Files already there at start-up, and more arriving while trace2d runs.
  auto write_files = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string sid = "20261121T100000.000000Z-Hdirtest0-P" + std::to_string(100000 + i);
      const auto lines = trace_lines(sid, i);
      std::ofstream out(m_watched + "/" + sid);
      for (const auto& l : lines) {
        out << l;
      }
      expected[sid] = static_cast<long>(lines.size());
    }
  };
  write_files(0, k_files);
  auto daemon = std::make_unique<RunningDaemon>(m_dir, std::vector<std::string>{"--watch", m_watched});
  // Kill it as soon as anything is committed: mid-ingest, no chance to flush.
  ASSERT_TRUE(wait_until([&] {
    db::Database db = open_db(daemon->db_path());
    return db.query_int("SELECT count(*) FROM sessions").value_or(0) > 0;
  }));
  daemon->process().signal(SIGKILL);
  daemon->process().wait();
  const long files_left = std::distance(fs::directory_iterator(m_watched), fs::directory_iterator());
  EXPECT_GT(files_left, 0) << "trace2d finished before the kill: the test proves nothing";

  daemon = std::make_unique<RunningDaemon>(m_dir, std::vector<std::string>{"--watch", m_watched});
  ASSERT_TRUE(wait_until([&] { return fs::is_empty(m_watched); }, std::chrono::seconds(30)));
  const ProcessResult stopped = daemon->stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(stored_counts(daemon->db_path()), expected);
  db::Database db = open_db(daemon->db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE status = 'complete'"), k_files);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
}

TEST_F(DirTest, KeepsADirectoryWithMaxFilesDrained) {
  constexpr int k_runs = 50;
  RunningDaemon daemon(m_dir, {"--watch", m_watched});
  const std::string repo = make_repo(m_dir, "repo");
  const std::map<std::string, std::string> env = {{"GIT_TRACE2_EVENT", m_watched},
                                                   {"GIT_TRACE2_MAX_FILES", "5"}};
  for (int i = 0; i < k_runs; ++i) {
    ASSERT_EQ(run_git(repo, {"rev-parse", "HEAD"}, env).exit_code, 0);
  }
  ASSERT_TRUE(wait_until([&] { return fs::is_empty(m_watched); }));
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE cmd_name = 'rev-parse' AND status = 'complete'"),
            k_runs);
}

TEST_F(DirTest, TheDiscardSentinelIsIngestedAndRemoved) {
  RunningDaemon daemon(m_dir, {"--watch", m_watched});
  const std::string repo = make_repo(m_dir, "repo");
  // Fill the directory past git's limit with files trace2d cannot read (not
  // regular files), so git writes the sentinel.
  for (int i = 0; i < 4; ++i) {
    fs::create_directories(m_watched + "/.keep" + std::to_string(i));
  }
  const std::map<std::string, std::string> env = {{"GIT_TRACE2_EVENT", m_watched},
                                                   {"GIT_TRACE2_MAX_FILES", "5"}};
  ASSERT_EQ(run_git(repo, {"rev-parse", "HEAD"}, env).exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return !fs::exists(m_watched + "/git-trace2-discard"); }));
  ASSERT_TRUE(wait_until([&] {
    db::Database db = open_db(daemon.db_path());
    return db.query_int("SELECT too_many_files FROM source_stats WHERE source = 'dir'").value_or(0) >= 1;
  }));
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE event = 'too_many_files'"), 1);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE cmd_name = 'rev-parse' AND status = 'complete'"), 1);
}

TEST_F(DirTest, TailsAFileWhileGitWritesIt) {
  RunningDaemon daemon(m_dir, {"--watch", m_watched});
  const std::string repo = make_repo(m_dir, "repo");
  ProcessSpec spec = git_spec(repo, {"cat-file", "--batch"}, {{"GIT_TRACE2_EVENT", m_watched}});
  spec.stdin_pipe = true;
  Process git(spec);
  // Stored while git still runs (it waits on stdin).
  ASSERT_TRUE(wait_until([&] {
    db::Database db = open_db(daemon.db_path());
    return db.query_int("SELECT count(*) FROM sessions WHERE cmd_name = 'cat-file' AND status = 'running'")
               .value_or(0) == 1;
  }));
  EXPECT_FALSE(fs::is_empty(m_watched));  // git still writes it: not removed
  git.close_stdin();
  EXPECT_EQ(git.wait().exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return fs::is_empty(m_watched); }));
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_text("SELECT status FROM sessions WHERE cmd_name = 'cat-file'"), "complete");
}

TEST_F(DirTest, NeverFollowsSymlinksOrReadsOddFiles) {
  const std::string outside = m_dir.file("outside.jsonl");
  write_file(outside, trace_lines("outside-session", 0)[0]);
  fs::create_symlink(outside, m_watched + "/link-to-outside");
  ::mkfifo((m_watched + "/a-fifo").c_str(), 0600);
  write_file(m_watched + "/.hidden", trace_lines("hidden-session", 0)[0]);
  RunningDaemon daemon(m_dir, {"--watch", m_watched});
  const auto lines = trace_lines("real-session", 0);
  std::string content;
  for (const auto& l : lines) {
    content += l;
  }
  write_file(m_watched + "/real-session", content);
  ASSERT_TRUE(wait_until([&] { return !fs::exists(m_watched + "/real-session"); }));
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions"), 1);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events"), static_cast<long>(lines.size()));
  EXPECT_TRUE(fs::is_symlink(m_watched + "/link-to-outside"));
  EXPECT_TRUE(fs::exists(outside));
  EXPECT_TRUE(fs::exists(m_watched + "/a-fifo"));
  EXPECT_TRUE(fs::exists(m_watched + "/.hidden"));
}

TEST_F(DirTest, KeptFilesAreNotReadTwiceAfterARestart) {
  const auto lines = trace_lines("kept-session", 0);
  std::string content;
  for (const auto& l : lines) {
    content += l;
  }
  write_file(m_watched + "/kept-session", content);
  for (int run = 0; run < 2; ++run) {
    RunningDaemon daemon(m_dir, {"--watch", m_watched, "--no-delete-finished"});
    ASSERT_TRUE(wait_until([&] {
      db::Database db = open_db(daemon.db_path());
      return db.query_int("SELECT finished FROM file_offsets").value_or(0) == 1;
    }));
    const ProcessResult stopped = daemon.stop();
    ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  }
  EXPECT_TRUE(fs::exists(m_watched + "/kept-session"));
  EXPECT_EQ(stored_counts(m_dir.file("t.db")), (std::map<std::string, long>{{"kept-session", static_cast<long>(lines.size())}}));
}

// Events per SID in a trace file, as git wrote them.
std::map<std::string, long> counts_in_file(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, long> counts;
  std::string line;
  while (std::getline(in, line)) {
    const auto begin = line.find("\"sid\":\"") + 7;
    ++counts[line.substr(begin, line.find('"', begin) - begin)];
  }
  return counts;
}

// GIT_TRACE2_EVENT naming a file in a watched directory: every git appends
// to it, many at once. It is a log, not one process's file: the first git's
// end neither finishes nor removes it, and no git's lines are lost.
TEST_F(DirTest, AFileEveryGitAppendsToIsReadAsASharedLogAndKept) {
  RunningDaemon daemon(m_dir, {"--watch", m_watched});  // delete_finished on, as by default
  const std::string repo = make_repo(m_dir, "repo", 2);
  const std::string log = m_watched + "/all.log";
  const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", log}};
  std::vector<std::unique_ptr<Process>> gits;
  for (int i = 0; i < 20; ++i) {
    gits.push_back(std::make_unique<Process>(git_spec(repo, {"rev-parse", "--git-dir"}, trace)));
  }
  for (auto& git : gits) {
    EXPECT_EQ(git->wait().exit_code, 0);
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(run_git(repo, {"rev-parse", "--git-dir"}, trace).exit_code, 0);
  }
  const std::map<std::string, long> written = counts_in_file(log);
  ASSERT_EQ(written.size(), 23U);
  ASSERT_TRUE(wait_for_sessions(daemon.db_path(), 23));
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(stored_counts(daemon.db_path()), written);
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM sessions WHERE status != 'complete'"), 0);
  EXPECT_TRUE(fs::exists(log));  // others' log: never removed
  EXPECT_NE(stopped.err.find("holds the events of more than one git process"), std::string::npos) << stopped.err;
}

// A kept file finished at its git's end that another git appends to later
// is read on from where it ended, in this run and after a restart, and
// nothing is read twice.
TEST_F(DirTest, AFinishedFileThatGrowsAgainIsReadOnFromItsEnd) {
  const std::string repo = make_repo(m_dir, "repo", 2);
  const std::string log = m_watched + "/all.log";
  const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", log}};
  {
    RunningDaemon daemon(m_dir, {"--watch", m_watched, "--no-delete-finished"});
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(run_git(repo, {"rev-parse", "--git-dir"}, trace).exit_code, 0);
      ASSERT_TRUE(wait_for_sessions(daemon.db_path(), i + 1));  // finished at its atexit before the next
    }
    const ProcessResult stopped = daemon.stop();
    ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
    // Never two sessions in one read, yet a file that grows after its git's
    // atexit is another git's too.
    EXPECT_NE(stopped.err.find("holds the events of more than one git process"), std::string::npos) << stopped.err;
  }
  EXPECT_EQ(run_git(repo, {"rev-parse", "--git-dir"}, trace).exit_code, 0);  // while trace2d is down
  RunningDaemon daemon(m_dir, {"--watch", m_watched, "--no-delete-finished"});
  EXPECT_EQ(run_git(repo, {"rev-parse", "--git-dir"}, trace).exit_code, 0);
  ASSERT_TRUE(wait_for_sessions(daemon.db_path(), 5));
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  const std::map<std::string, long> written = counts_in_file(log);
  ASSERT_EQ(written.size(), 5U);
  EXPECT_EQ(stored_counts(daemon.db_path()), written);
}

}  // namespace
}  // namespace trace2d::test
