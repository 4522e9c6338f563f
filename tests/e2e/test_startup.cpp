// Start-up behaviour of the real binary: flags, the printed git setting,
// stale sockets, a live owner, bad paths.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <sched.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

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

// Each of trace2d's threads by name ("trace2d-parse") with its scheduling
// policy, as the kernel reports it.
std::map<std::string, int> thread_policies(pid_t pid) {
  std::map<std::string, int> policies;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    const int policy = ::sched_getscheduler(static_cast<pid_t>(std::stol(task.path().filename().string())));
    if (!name.empty() && policy >= 0) {
      policies[name] = policy;
    }
  }
  return policies;
}

TEST(Startup, BackgroundThreadsRunUnderBatchSchedulingAndReadersDoNot) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--otlp-endpoint", "http://127.0.0.1:1"});
  std::map<std::string, int> policies;
  ASSERT_TRUE(wait_until([&] {
    policies = thread_policies(daemon.pid());
    return policies.count("trace2d-otlp") == 1;
  }, std::chrono::seconds(10)));
  for (const char* background : {"trace2d-parse", "trace2d-store", "trace2d-otlp"}) {
    ASSERT_EQ(policies.count(background), 1u) << background;
    EXPECT_EQ(policies[background], SCHED_BATCH) << background;
  }
  // What drains git stays at the normal policy.
  ASSERT_EQ(policies.count("trace2d-stream"), 1u);
  EXPECT_EQ(policies["trace2d-stream"], SCHED_OTHER);
  EXPECT_EQ(policies["trace2d"], SCHED_OTHER);  // the main thread
}

TEST(Startup, NoBatchSchedulingKeepsEveryThreadAtTheNormalPolicy) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--no-batch-scheduling"});
  std::map<std::string, int> policies;
  ASSERT_TRUE(wait_until([&] {
    policies = thread_policies(daemon.pid());
    return policies.count("trace2d-parse") == 1 && policies.count("trace2d-store") == 1;
  }, std::chrono::seconds(10)));
  for (const auto& [name, policy] : policies) {
    EXPECT_EQ(policy, SCHED_OTHER) << name;
  }
}

}  // namespace
}  // namespace trace2d::test
