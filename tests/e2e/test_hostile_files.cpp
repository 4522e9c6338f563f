// Hostile local users and the watched directories (issue 10): every local
// user can write into /var/log/git-trace2 (mode 1733). What one file owner
// puts there must cost only them: trace2d runs at RLIMIT_NOFILE 1024, as
// under systemd, and the attacker's files belong to `nobody` while the
// victim's git runs as root.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/sanitizers.hpp"

namespace trace2d::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Under AddressSanitizer everything is slower: time bounds get this much
// room (memory bounds get k_sanitizer_kib).
constexpr double k_sanitizer_seconds = k_sanitized ? 3.0 : 0.0;

std::string event(const std::string& sid, const std::string& name, const std::string& rest) {
  return R"({"event":")" + name + R"(","sid":")" + sid +
         R"(","thread":"main","time":"2026-11-23T10:00:00.000000Z","file":"t.c","line":1)" + rest + "}\n";
}

std::string version_line(const std::string& sid) { return event(sid, "version", R"(,"evt":"3","exe":"2.39.5")"); }


void give_to_nobody(const std::string& path) {
  ASSERT_EQ(::chown(path.c_str(), nobody().uid, nobody().gid), 0) << path;
}

class HostileFiles : public ::testing::Test {
 protected:
  TempDir m_dir;
  std::string m_watched = m_dir.file("traces");
  // The attacker writes elsewhere and renames into the directory: no
  // IN_CLOSE_WRITE there says the file is done.
  std::string m_staging = m_dir.file("staging");

  void SetUp() override {
    fs::create_directories(m_watched);
    fs::create_directories(m_staging);
  }

  // A file of `nobody`, moved into the watched directory.
  void plant(const std::string& name, const std::string& content) {
    const std::string staged = m_staging + "/" + name;
    write_file(staged, content);
    give_to_nobody(staged);
    fs::rename(staged, m_watched + "/" + name);
  }

  // Runs the victim's real git into the watched directory and returns how
  // long it took until trace2d had stored it complete.
  std::chrono::duration<double> victim_git_stored(const RunningDaemon& daemon, const std::string& repo,
                                                  long long already = 0) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(run_git(repo, {"rev-parse", "HEAD"}, {{"GIT_TRACE2_EVENT", m_watched}}).exit_code, 0);
    EXPECT_TRUE(wait_until(
        [&] {
          return query_count(daemon.db_path(),
                       "SELECT count(*) FROM sessions WHERE cmd_name = 'rev-parse' AND status = 'complete'") >
                 already;
        },
        20s));
    return std::chrono::steady_clock::now() - start;
  }
};

TEST_F(HostileFiles, FakePidFilesPinNoDescriptorsAndTheVictimsGitIsStoredPromptly) {
  constexpr int k_files = 1100;
  // One event each, no atexit, all claiming pid 1 (always alive), already
  // there when trace2d starts (so the attack survives a restart).
  for (int i = 0; i < k_files; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "f%04d-P00000001", i);
    plant(name, version_line(name));
  }
  const std::string repo = make_repo(m_dir, "repo");
  RunningDaemon daemon(m_dir, {"--watch", m_watched, "--status-interval-ms", "100"}, k_service_fd_limit);
  const auto took = victim_git_stored(daemon, repo);
  const long fds = open_fds(daemon.pid());
  // The attacker's files are held at their owner's cap (half of the 256 a
  // trace2d at 1,024 descriptors opens), the rest wait unopened: their
  // writer "runs" (pid 1) for the next minute.
  ASSERT_TRUE(wait_until([&] {
    return query_count(daemon.db_path(), "SELECT channels_open FROM source_stats WHERE source = 'dir'") == 128;
  }));
  std::printf("[ measured ] 1,100 fake-pid files: victim's git stored in %.2f s; trace2d holds %ld fds\n",
              took.count(), fds);
  EXPECT_LT(took, 5s);
  // At most 128 of the attacker's files, plus trace2d's own descriptors
  // (database, sockets, inotify, epoll).
  EXPECT_LT(fds, 200);
  // The attacker's files were opened (up to their cap), not ignored.
  EXPECT_GE(query_count(daemon.db_path(), "SELECT count(*) FROM sessions WHERE peer_uid = " +
                                        std::to_string(nobody().uid)),
            1);
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
}

TEST_F(HostileFiles, APidClaimIsBelievedOnlyForAProcessOfTheFilesOwner) {
  constexpr int k_files = 200;
  for (int i = 0; i < k_files; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "g%04d-P00000001", i);
    plant(name, version_line(name));
  }
  // root's file naming a live root process (this test): its writer runs.
  char mine[32];
  std::snprintf(mine, sizeof mine, "mine-P%08x", static_cast<unsigned>(::getpid()));
  write_file(m_staging + "/" + mine, version_line(mine));
  fs::rename(m_staging + "/" + mine, m_watched + "/" + mine);

  RunningDaemon daemon(m_dir,
                       {"--watch", m_watched, "--dir-idle-timeout-ms", "200", "--dir-max-open-files-per-uid", "100"},
                       k_service_fd_limit);
  // pid 1 is root's, the files nobody's: their claim is false, so they are
  // finished after the idle timeout and removed, a hundred at a time.
  ASSERT_TRUE(wait_until([&] { return std::distance(fs::directory_iterator(m_watched), fs::directory_iterator()) == 1; },
                         15s));
  EXPECT_TRUE(fs::exists(m_watched + "/" + mine));
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM sessions WHERE status = 'incomplete' AND sid LIKE 'g%'"),
            k_files);
}

TEST_F(HostileFiles, FilesOverTheirOwnersCapWaitUnopenedAndAreStoredWhenASlotFrees) {
  RunningDaemon daemon(m_dir, {"--watch", m_watched, "--dir-max-open-files-per-uid", "1"}, k_service_fd_limit);
  // root's one slot is held by a file whose writer (this test) runs.
  char held[32];
  std::snprintf(held, sizeof held, "held-P%08x", static_cast<unsigned>(::getpid()));
  write_file(m_staging + "/" + held, version_line(held));
  fs::rename(m_staging + "/" + held, m_watched + "/" + held);
  ASSERT_TRUE(wait_until([&] { return query_count(daemon.db_path(), "SELECT count(*) FROM sessions") == 1; }));
  // Three gits of the same owner write, close and exit meanwhile: they wait.
  const std::string repo = make_repo(m_dir, "repo");
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(run_git(repo, {"rev-parse", "HEAD"}, {{"GIT_TRACE2_EVENT", m_watched}}).exit_code, 0);
  }
  const std::string stored = "SELECT count(*) FROM sessions WHERE cmd_name = 'rev-parse' AND status = 'complete'";
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(query_count(daemon.db_path(), stored), 0);
  // The slot frees: each is opened in turn, known to be closed by its
  // writer, read whole and finished.
  fs::remove(m_watched + "/" + held);
  ASSERT_TRUE(wait_until([&] { return query_count(daemon.db_path(), stored) == 3; }, 5s));
  ASSERT_TRUE(wait_until([&] { return fs::is_empty(m_watched); }, 5s));
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
}

TEST_F(HostileFiles, SparseTerabyteFileIsRefusedUnreadAndNeverReadAfterARestart) {
  const std::string repo = make_repo(m_dir, "repo");
  const std::vector<std::string> args = {"--watch", m_watched, "--no-delete-finished"};
  auto daemon = std::make_unique<RunningDaemon>(m_dir, args, k_service_fd_limit);
  const std::string staged = m_staging + "/sparse-P00000001";
  write_file(staged, "");
  fs::resize_file(staged, 1ULL << 40);  // truncate -s 1T
  give_to_nobody(staged);
  const std::string sparse = m_watched + "/sparse-P00000001";
  fs::rename(staged, sparse);

  const std::string refused =
      "SELECT count(*) FROM rejects WHERE source = 'dir' AND reason LIKE '%''" + sparse + "'' refused: sparse file%'";
  ASSERT_TRUE(wait_until([&] { return query_count(daemon->db_path(), refused) == 1; }, 5s));
  EXPECT_EQ(query_count(daemon->db_path(), "SELECT size FROM rejects WHERE reason LIKE '%sparse%'"), 1LL << 40);
  EXPECT_EQ(query_count(daemon->db_path(), "SELECT peer_uid FROM rejects WHERE reason LIKE '%sparse%'"),
            static_cast<long long>(nobody().uid));
  EXPECT_LT(victim_git_stored(*daemon, repo), 5s);

  const ProcessResult stopped = daemon->stop(10s);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_LT(stopped.seconds, 2.0 + k_sanitizer_seconds);  // the shutdown grace is 300 ms here
  EXPECT_TRUE(fs::exists(sparse));  // kept (--no-delete-finished) ...

  // ... and after a restart neither read from 0 nor refused again: its
  // position was committed as finished.
  daemon = std::make_unique<RunningDaemon>(m_dir, args, k_service_fd_limit);
  EXPECT_LT(victim_git_stored(*daemon, repo, 1), 5s);
  EXPECT_EQ(query_count(daemon->db_path(), refused), 1);
  const ProcessResult again = daemon->stop(10s);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_LT(again.seconds, 2.0 + k_sanitizer_seconds);
}

TEST_F(HostileFiles, FileOverTheSizeCapIsRefusedAndRemoved) {
  RunningDaemon daemon(m_dir, {"--watch", m_watched, "--dir-max-file-bytes", "1048576"}, k_service_fd_limit);
  std::string content;
  for (int i = 0; content.size() < 2 * 1048576; ++i) {
    content += event("huge-P00000001", "data", R"(,"t_abs":0.1,"t_rel":0.1,"nesting":1,"category":"c","key":"k","value":")" +
                                                    std::string(1000, 'v') + "\"");
  }
  plant("huge-P00000001", content);
  ASSERT_TRUE(wait_until([&] { return !fs::exists(m_watched + "/huge-P00000001"); }, 5s));
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM rejects WHERE reason LIKE '%huge-P00000001'' refused: "
                                    "file too big: " + std::to_string(content.size()) + " bytes (limit 1048576)%'"),
            1);
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM events"), 0);
}

TEST_F(HostileFiles, BigFileIsReadInBoundedMemory) {
  // 200 MB of 4 KiB events, one session; the queue's bound is 16 MiB.
  const std::string sid = "big-P00000001";
  const std::string line =
      event(sid, "data", R"(,"t_abs":0.1,"t_rel":0.1,"nesting":1,"category":"c","key":"k","value":")" +
                             std::string(4000, 'v') + "\"");
  constexpr std::uint64_t k_bytes = 200'000'000;
  const std::string staged = m_staging + "/" + sid;
  long lines = 1;
  {
    std::ofstream out(staged, std::ios::binary);
    out << version_line(sid);
    for (std::uint64_t written = 0; written < k_bytes; written += line.size(), ++lines) {
      out << line;
    }
  }
  give_to_nobody(staged);
  RunningDaemon daemon(m_dir, {"--watch", m_watched}, k_service_fd_limit);
  const std::string repo = make_repo(m_dir, "repo");
  const long idle_kib = status_kib(daemon.pid(), "VmHWM");
  const auto start = std::chrono::steady_clock::now();
  fs::rename(staged, m_watched + "/" + sid);
  // Meanwhile a victim's git sends datagrams, read on the same io thread and
  // counted against the same memory bound: neither is taken by the file.
  ASSERT_TRUE(wait_until([&] { return query_count(daemon.db_path(), "SELECT count(*) FROM events") > 0; }));
  const auto victim_start = std::chrono::steady_clock::now();
  ASSERT_EQ(run_git(repo, {"rev-parse", "HEAD"}, {{"GIT_TRACE2_EVENT", "af_unix:dgram:" + daemon.dgram_socket_path()}})
                .exit_code,
            0);
  ASSERT_TRUE(wait_until([&] {
    return query_count(daemon.db_path(), "SELECT count(*) FROM sessions WHERE cmd_name = 'rev-parse' AND status = 'complete'") == 1;
  }));
  const std::chrono::duration<double> victim_took = std::chrono::steady_clock::now() - victim_start;
  EXPECT_LT(victim_took, 3s);
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM rejects"), 0);  // nothing dropped at the bound
  EXPECT_GT(query_count(daemon.db_path(), "SELECT count(*) FROM file_offsets WHERE finished = 0 AND offset < " +
                                        std::to_string(k_bytes)),
            0)
      << "the file was read before the victim's git ran: the test proves nothing";
  // No atexit and its writer claims pid 1: stored as it is read, then kept
  // open (idle timeout a minute); everything stored is the proof it was read.
  ASSERT_TRUE(wait_until([&] { return query_count(daemon.db_path(), "SELECT event_count FROM sessions") == lines; }, 60s));
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  const long peak_kib = status_kib(daemon.pid(), "VmHWM");
  std::printf("[ measured ] a 200 MB trace file: stored in %.1f s; VmHWM %ld MiB (%ld MiB before it); a victim's "
              "git over dgram meanwhile stored in %.2f s\n",
              took.count(), peak_kib / 1024, idle_kib / 1024, victim_took.count());
  EXPECT_LT(peak_kib, 256 * 1024 + k_sanitizer_kib);
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
}

TEST_F(HostileFiles, EndlessLineCommitsItsPositionAndARestartResumesThere) {
  // 64 MiB without a newline (real blocks, not sparse), renamed in: one line
  // over the limit, discarded as it is read.
  constexpr std::uint64_t k_bytes = 64ULL << 20;
  const std::string name = "endless-P00000001";
  {
    std::ofstream out(m_staging + "/" + name, std::ios::binary);
    const std::string block(1 << 20, 'x');
    for (std::uint64_t i = 0; i < k_bytes; i += block.size()) {
      out << block;
    }
  }
  give_to_nobody(m_staging + "/" + name);
  const std::vector<std::string> args = {"--watch", m_watched, "--max-line-bytes", "65536", "--status-interval-ms",
                                         "100"};
  auto daemon = std::make_unique<RunningDaemon>(m_dir, args, k_service_fd_limit);
  fs::rename(m_staging + "/" + name, m_watched + "/" + name);
  const std::string position = "SELECT offset FROM file_offsets WHERE path = '" + m_watched + "/" + name + "'";
  // Committed past the discarded bytes, not left at the line's start (0).
  ASSERT_TRUE(wait_until([&] { return query_count(daemon->db_path(), position) == static_cast<long long>(k_bytes); }, 10s));
  const ProcessResult stopped = daemon->stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;

  // The line ends and a good one follows; after the restart only these new
  // bytes are read.
  const std::string tail = "\n" + version_line(name);
  {
    std::ofstream out(m_watched + "/" + name, std::ios::binary | std::ios::app);
    out << tail;
  }
  daemon = std::make_unique<RunningDaemon>(m_dir, args, k_service_fd_limit);
  ASSERT_TRUE(wait_until([&] { return query_count(daemon->db_path(), "SELECT count(*) FROM events") == 1; }, 10s));
  ASSERT_TRUE(wait_until([&] {
    return query_count(daemon->db_path(), "SELECT bytes FROM source_stats WHERE source = 'dir'") ==
           static_cast<long long>(tail.size());
  }));
  const ProcessResult again = daemon->stop();
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(query_count(daemon->db_path(), "SELECT count(*) FROM rejects WHERE reason LIKE 'line too long:%'"), 1);
}

TEST_F(HostileFiles, HardLinkedFileIsRefusedNotStoredAsItsOwner) {
  // A victim's world-writable trace (root's here), hard-linked into the
  // directory by someone else: its owner is not who put it there.
  const std::string victim_file = m_dir.file("victim-trace");
  const std::string sid = "victim-P00000001";
  write_file(victim_file, version_line(sid) + event(sid, "atexit", R"(,"t_abs":0.1,"code":0)"));
  ::chmod(victim_file.c_str(), 0666);
  RunningDaemon daemon(m_dir, {"--watch", m_watched}, k_service_fd_limit);
  fs::create_hard_link(victim_file, m_watched + "/" + sid);
  ASSERT_TRUE(wait_until([&] { return !fs::exists(m_watched + "/" + sid); }, 5s));  // the link, not the file
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_TRUE(fs::exists(victim_file));
  EXPECT_EQ(fs::hard_link_count(victim_file), 1u);
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM sessions"), 0);
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM events"), 0);
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM rejects WHERE source = 'dir' AND peer_uid IS NULL AND "
                                    "reason LIKE '%" + sid + "'' refused: it has 2 hard links%'"),
            1);
}

// git makes its trace file with mode 0666 less the umask: under umask 000
// every user may write it, and what another appends would be stored as its
// owner's. The file is refused unread, its owner told why; a git run under
// the usual umask, in the same directory, is stored.
TEST_F(HostileFiles, AWorldWritableTraceFileOfRealGitIsRefusedAndItsOwnerToldWhy) {
  const std::string repo = make_repo(m_dir, "repo", 2);
  RunningDaemon daemon(m_dir, {"--watch", m_watched}, k_service_fd_limit);
  const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", m_watched}};
  ProcessSpec open_to_all = git_spec(repo, {"status", "--porcelain"}, trace);
  open_to_all.argv.insert(open_to_all.argv.begin(), {"sh", "-c", "umask 000 && exec \"$@\"", "sh"});
  const ProcessResult refused_git = run_process(open_to_all);
  ASSERT_EQ(refused_git.exit_code, 0) << refused_git.err;
  ASSERT_EQ(run_git(repo, {"rev-parse", "HEAD"}, trace).exit_code, 0);
  const std::string refused =
      "SELECT count(*) FROM rejects WHERE source = 'dir' AND peer_uid = " + std::to_string(::getuid()) +
      " AND reason LIKE '%refused: every user may write it (mode 0666)%'";
  ASSERT_TRUE(wait_until([&] {
    return query_count(daemon.db_path(), refused) == 1 &&
           query_count(daemon.db_path(), "SELECT count(*) FROM sessions WHERE status = 'complete'") == 1;
  }));
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM sessions WHERE cmd_name = 'status'"), 0);
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM sessions WHERE cmd_name = 'rev-parse'"), 1);
  std::string left;
  for (const fs::directory_entry& entry : fs::directory_iterator(m_watched)) {
    left += entry.path().filename().string() + "\n";
  }
  EXPECT_EQ(left, "");  // both files finished and removed
}

// Kept (--no-delete-finished), the refused link stays in the directory
// while its file grows: a refused file is never read on, so each write
// costs neither a read nor a reject row.
TEST_F(HostileFiles, AKeptHardLinkStaysRefusedWhileItsFileGrows) {
  const std::string victim_file = m_dir.file("victim-trace");
  const std::string sid = "victim-P00000001";
  write_file(victim_file, version_line(sid));
  ::chmod(victim_file.c_str(), 0666);
  RunningDaemon daemon(m_dir, {"--watch", m_watched, "--no-delete-finished"}, k_service_fd_limit);
  fs::create_hard_link(victim_file, m_watched + "/" + sid);
  const std::string refused = "SELECT count(*) FROM rejects WHERE reason LIKE '%refused: it has 2 hard links%'";
  ASSERT_TRUE(wait_until([&] { return query_count(daemon.db_path(), refused) == 1; }, 5s));
  for (int i = 0; i < 20; ++i) {
    // Through the link, which the directory's watch sees (its file is world-writable).
    std::ofstream(m_watched + "/" + sid, std::ios::app)
        << event(sid, "data", R"(,"category":"c","key":"k","value":"v")");
    std::this_thread::sleep_for(20ms);
  }
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(query_count(daemon.db_path(), refused), 1);
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM events"), 0);
}

}  // namespace
}  // namespace trace2d::test
