// The fallback runtime directory (<TMPDIR or /tmp>/trace2d-<uid>, used
// without XDG_RUNTIME_DIR) and the socket's lock file, against another
// local user who got there first (issue 10, item 10).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "daemon/source/runtime_dir.hpp"
#include "daemon/source/socket_file.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::source {
namespace {

// TMPDIR pointing into a test directory for the life of the object.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string& value) {
    if (const char* old = std::getenv("TMPDIR"); old != nullptr) {
      m_old = old;
    }
    ::setenv("TMPDIR", value.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (m_old) {
      ::setenv("TMPDIR", m_old->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }
  ScopedTmpdir(const ScopedTmpdir&) = delete;
  ScopedTmpdir& operator=(const ScopedTmpdir&) = delete;

 private:
  std::optional<std::string> m_old;
};

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::string startup_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const StartupError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RuntimeDir, TheFallbackIsUnderTmpdirAndCreatedPrivate) {
  test::TempDir dir;
  const ScopedTmpdir tmpdir(dir.path().string() + "/");
  const std::string root = dir.file("trace2d-" + std::to_string(::geteuid()));
  EXPECT_EQ(fallback_runtime_root(), root);
  const mode_t old_umask = ::umask(022);
  prepare_socket_directory(root + "/trace2d");
  ::umask(old_umask);
  EXPECT_EQ(mode_of(root), 0700u);
  EXPECT_TRUE(std::filesystem::is_directory(root + "/trace2d"));
  // Ours and private: used again as it is.
  EXPECT_NO_THROW(prepare_socket_directory(root + "/trace2d"));
}

TEST(RuntimeDir, RefusesAFallbackOwnedByAnotherUser) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to hand a directory to another uid";
  }
  test::TempDir dir;
  const ScopedTmpdir tmpdir(dir.path().string());
  const std::string root = fallback_runtime_root();
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  const test::RunAs other = test::nobody();
  ASSERT_EQ(::chown(root.c_str(), other.uid, other.gid), 0);
  const std::string error = startup_error([&] { prepare_socket_directory(root + "/trace2d"); });
  EXPECT_NE(error.find("'" + root + "' is owned by uid " + std::to_string(other.uid) + ", not by this user"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("XDG_RUNTIME_DIR"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(root + "/trace2d"));
}

TEST(RuntimeDir, RefusesAFallbackOthersMayWriteOrASymlink) {
  test::TempDir dir;
  const ScopedTmpdir tmpdir(dir.path().string());
  const std::string root = fallback_runtime_root();
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(root.c_str(), 0777), 0);
  std::string error = startup_error([&] { prepare_socket_directory(root + "/trace2d"); });
  EXPECT_NE(error.find("has mode 0777: group or others may write it"), std::string::npos) << error;
  ASSERT_EQ(::chmod(root.c_str(), 0720), 0);
  error = startup_error([&] { prepare_socket_directory(root + "/trace2d"); });
  EXPECT_NE(error.find("has mode 0720"), std::string::npos) << error;

  // A symlink to a private directory of ours is refused too: whoever made
  // the link can point it elsewhere later.
  std::filesystem::remove(root);
  ASSERT_EQ(::mkdir(dir.file("elsewhere").c_str(), 0700), 0);
  std::filesystem::create_directory_symlink(dir.file("elsewhere"), root);
  error = startup_error([&] { prepare_socket_directory(root + "/trace2d"); });
  EXPECT_NE(error.find("is not a directory (a symbolic link)"), std::string::npos) << error;
}

TEST(RuntimeDir, OtherSocketDirectoriesAreOnlyCreated) {
  test::TempDir dir;
  const ScopedTmpdir tmpdir(dir.file("tmp"));
  ASSERT_EQ(::mkdir(dir.file("shared").c_str(), 0777), 0);
  ASSERT_EQ(::chmod(dir.file("shared").c_str(), 01777), 0);
  EXPECT_NO_THROW(prepare_socket_directory(dir.file("shared/sub")));
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("shared/sub")));
}

TEST(SocketFileLock, NeverFollowsASymlinkedLockFile) {
  test::TempDir dir;
  const std::string victim = dir.file("victim.txt");
  test::write_file(victim, "precious\n");
  std::filesystem::create_symlink(victim, dir.file("t.sock.lock"));
  const std::string error = startup_error([&] { SocketFile file(dir.file("t.sock")); });
  EXPECT_NE(error.find("it is a symbolic link; refusing to follow it"), std::string::npos) << error;
  EXPECT_EQ(test::read_file(victim), "precious\n");
}

TEST(SocketFileLock, RefusesAHardLinkedLockFile) {
  test::TempDir dir;
  const std::string victim = dir.file("victim.txt");
  test::write_file(victim, "precious\n");
  std::filesystem::create_hard_link(victim, dir.file("t.sock.lock"));
  const std::string error = startup_error([&] { SocketFile file(dir.file("t.sock")); });
  EXPECT_NE(error.find("it has 2 hard links"), std::string::npos) << error;
  EXPECT_EQ(test::read_file(victim), "precious\n");
}

TEST(SocketFileLock, RefusesALockFileOfAnotherUser) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to hand a file to another uid";
  }
  test::TempDir dir;
  test::write_file(dir.file("t.sock.lock"), "");
  const test::RunAs other = test::nobody();
  ASSERT_EQ(::chown(dir.file("t.sock.lock").c_str(), other.uid, other.gid), 0);
  ASSERT_EQ(::chmod(dir.file("t.sock.lock").c_str(), 0666), 0);
  const std::string error = startup_error([&] { SocketFile file(dir.file("t.sock")); });
  EXPECT_NE(error.find("owned by uid " + std::to_string(other.uid)), std::string::npos) << error;
}

TEST(SocketFileLock, AnOldLockFileIsReusedWithoutTruncating) {
  test::TempDir dir;
  const std::string lock = dir.file("t.sock.lock");
  test::write_file(lock, "123456789012\n");  // a longer pid than ours, from an earlier run
  SocketFile first(dir.file("t.sock"));
  const std::string pid = std::to_string(::getpid());
  EXPECT_EQ(test::read_file(lock).substr(0, pid.size() + 1), pid + "\n");
  EXPECT_EQ(test::read_file(lock).size(), 13u);  // written over, never truncated
  const std::string error = startup_error([&] { SocketFile second(dir.file("t.sock")); });
  EXPECT_NE(error.find("another trace2d (pid " + pid + ") already owns"), std::string::npos) << error;
}

TEST(SocketFileLock, ANewLockFileIsCreatedExclusivelyAndRemovedAtExit) {
  test::TempDir dir;
  {
    SocketFile file(dir.file("t.sock"));
    struct stat st {};
    ASSERT_EQ(::lstat(dir.file("t.sock.lock").c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_uid, ::geteuid());
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("t.sock.lock")));
}

}  // namespace
}  // namespace trace2d::source
