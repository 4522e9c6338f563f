// git's target rules (trace2/tr2_dst.c), in process: what each value of
// GIT_TRACE2_EVENT opens, and the warnings git gives.

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "client/src/destination.hpp"
#include "tests/client/client_support.hpp"

namespace trace2d::client::detail {
namespace {

constexpr std::string_view k_sid = "ci/20261121T235101.565577Z-H0a7c9cdf-P000009e9";

// A bound (and, for streams, listening) Unix socket for the test.
class Listener {
 public:
  Listener(const std::string& path, int type) : m_path(path) {
    m_fd = ::socket(AF_UNIX, type, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    EXPECT_EQ(::bind(m_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    if (type == SOCK_STREAM) {
      EXPECT_EQ(::listen(m_fd, 4), 0);
    }
  }
  ~Listener() { ::close(m_fd); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

 private:
  std::string m_path;
  int m_fd;
};

Destination open(std::string_view target, std::string& warnings, bool debug = false,
                 std::string_view max_files = {}) {
  Destination d = open_destination({target, k_sid, debug, max_files}, warnings);
  return d;
}

void close_owned(const Destination& d) {
  if (d.owned) {
    ::close(d.fd);
  }
}

TEST(ClientDestination, OffStderrAndDescriptors) {
  std::string warnings;
  for (const std::string_view off : {"", "0", "false", "False"}) {
    EXPECT_EQ(open(off, warnings).kind, SinkKind::none) << off;
  }
  for (const std::string_view err : {"1", "true", "TRUE"}) {
    const Destination d = open(err, warnings);
    EXPECT_EQ(d.kind, SinkKind::file);
    EXPECT_EQ(d.fd, STDERR_FILENO);
    EXPECT_FALSE(d.owned);
  }
  const Destination seven = open("7", warnings);
  EXPECT_EQ(seven.fd, 7);
  EXPECT_FALSE(seven.owned);
  EXPECT_TRUE(warnings.empty()) << warnings;
}

TEST(ClientDestination, MalformedValuesWarnLikeGit) {
  std::string warnings;
  EXPECT_EQ(open("relative/path", warnings).kind, SinkKind::none);
  EXPECT_EQ(warnings, "warning: trace2: unknown value for 'GIT_TRACE2_EVENT': 'relative/path'\n");
  warnings.clear();
  // Bad socket values say something only with GIT_TRACE2_DST_DEBUG.
  const std::string long_path = "/" + std::string(120, 'x');
  for (const bool debug : {false, true}) {
    EXPECT_EQ(open("af_unix:", warnings, debug).kind, SinkKind::none);
    EXPECT_EQ(open("af_unix:dgram:rel", warnings, debug).kind, SinkKind::none);
    EXPECT_EQ(open("af_unix:" + long_path, warnings, debug).kind, SinkKind::none);
  }
  EXPECT_EQ(warnings,
            "warning: trace2: invalid AF_UNIX value 'af_unix:' for 'GIT_TRACE2_EVENT' tracing\n"
            "warning: trace2: invalid AF_UNIX path 'rel' for 'GIT_TRACE2_EVENT' tracing\n"
            "warning: trace2: invalid AF_UNIX path '" +
                long_path + "' for 'GIT_TRACE2_EVENT' tracing\n");
}

TEST(ClientDestination, FilesAndDirectories) {
  test::TempDir dir;
  std::string warnings;
  const Destination file = open(dir.file("a.json"), warnings);
  EXPECT_EQ(file.kind, SinkKind::file);
  EXPECT_TRUE(file.owned);
  close_owned(file);
  EXPECT_TRUE(std::filesystem::exists(dir.file("a.json")));

  // A directory: the SID's last component, then .1 .. .9 on clashes.
  const std::string traces = dir.file("traces");
  std::filesystem::create_directories(traces);
  const std::string leaf = "20261121T235101.565577Z-H0a7c9cdf-P000009e9";
  for (int i = 0; i < 10; ++i) {
    const Destination d = open(traces, warnings);
    ASSERT_EQ(d.kind, SinkKind::file) << i;
    close_owned(d);
    EXPECT_TRUE(
        std::filesystem::exists(traces + "/" + leaf + (i == 0 ? "" : "." + std::to_string(i))));
  }
  EXPECT_EQ(open(traces, warnings).kind, SinkKind::none) << "git gives up after 10 attempts";
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(open(traces, warnings, true).kind, SinkKind::none);
  EXPECT_EQ(warnings, "warning: trace2: could not open '" + traces + "/" + leaf +
                          "' for 'GIT_TRACE2_EVENT' tracing: File exists\n");
}

TEST(ClientDestination, MaxFilesMakesTheDiscardSentinel) {
  test::TempDir dir;
  std::string warnings;
  test::write_file(dir.path() / "one", "");
  test::write_file(dir.path() / "two", "");
  // "." and ".." count too, as readdir() returns them: 4 entries >= 3.
  const Destination first = open(dir.path().string(), warnings, false, "3");
  EXPECT_EQ(first.kind, SinkKind::file);
  EXPECT_TRUE(first.too_many_files);
  close_owned(first);
  EXPECT_TRUE(std::filesystem::exists(dir.file("git-trace2-discard")));
  EXPECT_EQ(open(dir.path().string(), warnings, false, "3").kind, SinkKind::none);
  const Destination unlimited = open(dir.path().string(), warnings, false, "0");
  EXPECT_EQ(unlimited.kind, SinkKind::file);
  EXPECT_FALSE(unlimited.too_many_files);
  close_owned(unlimited);
}

TEST(ClientDestination, SocketsWithGitsFallback) {
  test::TempDir dir;
  const std::string stream_path = dir.file("s.sock");
  const std::string dgram_path = dir.file("d.sock");
  Listener stream(stream_path, SOCK_STREAM);
  Listener dgram(dgram_path, SOCK_DGRAM);
  std::string warnings;
  const auto kind_of = [&](const std::string& target) {
    const Destination d = open(target, warnings, true);
    close_owned(d);
    return d.kind;
  };
  EXPECT_EQ(kind_of("af_unix:" + stream_path), SinkKind::stream);
  EXPECT_EQ(kind_of("af_unix:stream:" + stream_path), SinkKind::stream);
  EXPECT_EQ(kind_of("af_unix:" + dgram_path), SinkKind::dgram) << "EPROTOTYPE: falls back";
  EXPECT_EQ(kind_of("af_unix:dgram:" + dgram_path), SinkKind::dgram);
  EXPECT_TRUE(warnings.empty()) << warnings;
  EXPECT_EQ(kind_of("af_unix:stream:" + dgram_path), SinkKind::none);
  EXPECT_EQ(warnings, "warning: trace2: could not connect to socket '" + dgram_path +
                          "' for 'GIT_TRACE2_EVENT' tracing: Protocol wrong type for socket\n");
  warnings.clear();
  EXPECT_EQ(kind_of("af_unix:dgram:" + stream_path), SinkKind::none);
  EXPECT_EQ(kind_of("af_unix:" + dir.file("none.sock")), SinkKind::none);
  EXPECT_NE(warnings.find("No such file or directory"), std::string::npos) << warnings;
}

TEST(ClientDestination, GitBooleans) {
  EXPECT_EQ(parse_git_bool(""), false);
  EXPECT_EQ(parse_git_bool("yes"), true);
  EXPECT_EQ(parse_git_bool("On"), true);
  EXPECT_EQ(parse_git_bool("off"), false);
  EXPECT_EQ(parse_git_bool("1"), true);
  EXPECT_EQ(parse_git_bool("0"), false);
  EXPECT_EQ(parse_git_bool("2k"), true);
  EXPECT_EQ(parse_git_bool("maybe"), std::nullopt);
}

}  // namespace
}  // namespace trace2d::client::detail
