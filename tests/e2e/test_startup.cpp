// Start-up behaviour of the real binary: flags, the printed git setting,
// stale sockets, a live owner, bad paths.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

ProcessResult run_trace2d(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {TRACE2D_BIN};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  if (args.size() > 1) {
    // Tests run in parallel, and never with the machine's configuration file.
    spec.argv.insert(spec.argv.end(), {"--dgram-socket", "", "--config", ""});
  }
  return run_process(spec, std::chrono::seconds(20));
}

// Leaves a socket file behind with nobody listening, as a crashed daemon does.
void make_stale_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
}

TEST(Startup, HelpAndVersion) {
  const ProcessResult help = run_trace2d({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--socket"), std::string::npos);
  EXPECT_NE(help.out.find("--db"), std::string::npos);
  const ProcessResult version = run_trace2d({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("trace2d ", 0), 0u) << version.out;
}

TEST(Startup, UnknownFlagIsAUsageError) {
  const ProcessResult r = run_trace2d({"--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no-such-flag"), std::string::npos);
}

TEST(Startup, ReplacesAStaleSocketFile) {
  TempDir dir;
  make_stale_socket(dir.file("t.sock"));
  RunningDaemon daemon(dir);  // throws unless it printed its GIT_TRACE2_EVENT line
  EXPECT_EQ(daemon.stop().exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir.file("t.sock")));  // removed on exit
}

TEST(Startup, RefusesASocketOwnedByALiveDaemon) {
  TempDir dir;
  RunningDaemon first(dir);
  const ProcessResult second =
      run_trace2d({"--socket", first.socket_path(), "--db", dir.file("other.db")});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("already owns socket"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find(std::to_string(first.pid())), std::string::npos) << second.err;
  // The first one is unharmed.
  EXPECT_EQ(first.stop().exit_code, 0);
}

TEST(Startup, RefusesToReplaceARegularFile) {
  TempDir dir;
  write_file(dir.file("t.sock"), "precious");
  const ProcessResult r = run_trace2d({"--socket", dir.file("t.sock"), "--db", dir.file("t.db")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a socket"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(dir.file("t.sock")), "precious");
}

TEST(Startup, RejectsRelativeAndOverlongSocketPaths) {
  TempDir dir;
  const ProcessResult relative = run_trace2d({"--socket", "relative.sock", "--db", dir.file("t.db")});
  EXPECT_EQ(relative.exit_code, 1);
  EXPECT_NE(relative.err.find("not absolute"), std::string::npos) << relative.err;
  const std::string long_path = dir.file(std::string(120, 's'));
  const ProcessResult overlong = run_trace2d({"--socket", long_path, "--db", dir.file("t.db")});
  EXPECT_EQ(overlong.exit_code, 1);
  EXPECT_NE(overlong.err.find("107"), std::string::npos) << overlong.err;
}

TEST(Startup, UnusableDatabaseIsAClearError) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("db-is-a-dir"));
  const ProcessResult r =
      run_trace2d({"--socket", dir.file("t.sock"), "--db", dir.file("db-is-a-dir")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("db-is-a-dir"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace trace2d::test
