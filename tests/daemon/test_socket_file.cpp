#include "daemon/source/socket_file.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "tests/support/temp_dir.hpp"

namespace trace2d::source {
namespace {

int bind_at(const std::string& path, bool listen_too) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  if (listen_too) {
    EXPECT_EQ(::listen(fd, 1), 0);
  }
  return fd;
}

TEST(SocketFile, ValidatesPaths) {
  EXPECT_THROW(validate_socket_path("relative.sock"), StartupError);
  EXPECT_THROW(validate_socket_path(""), StartupError);
  EXPECT_THROW(validate_socket_path("/" + std::string(107, 'a')), StartupError);
  EXPECT_NO_THROW(validate_socket_path("/" + std::string(106, 'a')));
}

TEST(SocketFile, CreatesTheDirectoryAndRemovesOnlyItsOwnSocket) {
  test::TempDir dir;
  const std::string path = dir.file("run/trace2d/t.sock");
  {
    SocketFile file(path);
    EXPECT_TRUE(std::filesystem::is_directory(dir.file("run/trace2d")));
    const int fd = bind_at(path, true);
    file.bound(0660);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0660u);
    ::close(fd);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SocketFile, ClearsAStaleSocket) {
  test::TempDir dir;
  const std::string path = dir.file("t.sock");
  ::close(bind_at(path, false));
  ASSERT_TRUE(std::filesystem::exists(path));
  SocketFile file(path);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SocketFile, RefusesWhenSomeoneListens) {
  test::TempDir dir;
  const std::string path = dir.file("t.sock");
  const int fd = bind_at(path, true);
  EXPECT_THROW(SocketFile file(path), StartupError);
  EXPECT_TRUE(std::filesystem::exists(path));
  ::close(fd);
}

TEST(SocketFile, TheLockMakesASecondClaimFail) {
  test::TempDir dir;
  const std::string path = dir.file("t.sock");
  SocketFile first(path);
  try {
    SocketFile second(path);
    FAIL() << "second claim succeeded";
  } catch (const StartupError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(::getpid())), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trace2d::source
