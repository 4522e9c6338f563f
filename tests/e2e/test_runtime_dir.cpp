// The real trace2d, run as another real user (`nobody`) without
// XDG_RUNTIME_DIR: its fallback runtime directory under TMPDIR is created
// private, and one another user (root here) prepared for it, with a symlinked
// lock file inside, is refused before anything is opened there (issue 10,
// item 10: that lock file made trace2d truncate a file of its own user, and
// a replaced socket received that user's git events).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

// A /tmp of the test's own (mode 1777) and a home for `nobody`.
class OtherUserSetup {
 public:
  OtherUserSetup() : m_user(nobody()) {
    std::filesystem::permissions(m_dir.path(), std::filesystem::perms(0755));
    make_dir(tmp(), 01777, 0, 0);
    make_dir(home(), 0700, m_user.uid, m_user.gid);
  }

  [[nodiscard]] std::string tmp() const { return m_dir.file("tmp"); }
  [[nodiscard]] std::string home() const { return m_dir.file("home"); }
  [[nodiscard]] std::string runtime_root() const { return tmp() + "/trace2d-" + std::to_string(m_user.uid); }
  [[nodiscard]] const RunAs& user() const { return m_user; }

  [[nodiscard]] ProcessSpec daemon_spec() const {
    ProcessSpec spec;
    spec.argv = {TRACE2D_BIN, "--config", "", "--db", home() + "/t.db", "--dgram-socket", "",
                 "--shutdown-grace-ms", "100"};
    spec.env = {{"TMPDIR", tmp()}, {"HOME", home()}};
    spec.unset_env = {"XDG_RUNTIME_DIR", "XDG_STATE_HOME"};
    spec.run_as = m_user;
    return spec;
  }

  static void make_dir(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
    ASSERT_EQ(::mkdir(path.c_str(), 0700), 0) << path;
    ASSERT_EQ(::chown(path.c_str(), uid, gid), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
  }

 private:
  TempDir m_dir;
  RunAs m_user;
};

bool skip_without_root() { return ::geteuid() != 0; }

TEST(RuntimeDir, WithoutXdgRuntimeDirTheFallbackIsCreatedPrivate) {
  if (skip_without_root()) {
    GTEST_SKIP() << "needs root to run trace2d as another user";
  }
  const OtherUserSetup setup;
  Process daemon(setup.daemon_spec());
  const std::string socket = setup.runtime_root() + "/trace2d/trace2d.sock";
  ASSERT_TRUE(wait_until([&] { return daemon.out_so_far().find("GIT_TRACE2_EVENT=") != std::string::npos ||
                                      !daemon.running(); }))
      << daemon.err_so_far();
  EXPECT_NE(daemon.out_so_far().find("GIT_TRACE2_EVENT=af_unix:stream:" + socket + "\n"), std::string::npos)
      << daemon.out_so_far() << daemon.err_so_far();
  struct stat st {};
  ASSERT_EQ(::lstat(setup.runtime_root().c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, setup.user().uid);
  ASSERT_EQ(::lstat(socket.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  daemon.signal(SIGTERM);
  const ProcessResult result = daemon.wait(std::chrono::seconds(20));
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST(RuntimeDir, AFallbackAnotherUserPreparedIsRefusedAndNothingIsWrittenThere) {
  if (skip_without_root()) {
    GTEST_SKIP() << "needs root to run trace2d as another user";
  }
  const OtherUserSetup setup;
  // The victim's own file, and the attacker's (root's) directory, open to
  // all, with the victim's lock file name pointing at it.
  const std::string victim = setup.home() + "/precious.txt";
  write_file(victim, "precious\n");
  ASSERT_EQ(::chown(victim.c_str(), setup.user().uid, setup.user().gid), 0);
  OtherUserSetup::make_dir(setup.runtime_root(), 0777, 0, 0);
  OtherUserSetup::make_dir(setup.runtime_root() + "/trace2d", 0777, 0, 0);
  std::filesystem::create_symlink(victim, setup.runtime_root() + "/trace2d/trace2d.sock.lock");

  const ProcessResult result = run_process(setup.daemon_spec(), std::chrono::seconds(20));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("runtime directory '" + setup.runtime_root() + "' is owned by uid 0, not by this user"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("XDG_RUNTIME_DIR"), std::string::npos) << result.err;
  EXPECT_EQ(read_file(victim), "precious\n");
  EXPECT_FALSE(std::filesystem::exists(setup.runtime_root() + "/trace2d/trace2d.sock"));
}

}  // namespace
}  // namespace trace2d::test
