// The query service (daemon/query/): what a request may ask for, and the
// service itself with a stand-in trace2ctl (a shell script that prints its
// arguments): the caller's uid from the kernel, the caller's descriptors,
// the exit status, the bounds per uid, a client that goes away.

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/query/query_service.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::query {
namespace {

std::string fields(const std::vector<std::string>& list) {
  std::string out = std::string("trace2ctl-query 1") + '\0';
  for (const std::string& f : list) {
    out += f;
    out += '\0';
  }
  return out;
}

std::string refusal(const std::vector<std::string>& list, std::size_t descriptors = 3) {
  QueryRequest request;
  return parse_query_request(fields(list), descriptors, request);
}

TEST(QueryRequest, ArgumentsAndOnlyTheHarmlessVariablesPass) {
  QueryRequest request;
  ASSERT_EQ(parse_query_request(fields({"db=/d.db", "arg=sessions", "arg=--no-pager", "arg=-n", "env=TZ=UTC",
                                        "env=LC_ALL=C", "env=PAGER=sh -c evil", "env=LD_PRELOAD=/x.so",
                                        "env=PATH=/tmp"}),
                                3, request),
            "");
  EXPECT_EQ(request.db_path, "/d.db");
  EXPECT_EQ(request.args, (std::vector<std::string>{"sessions", "-n"}));
  EXPECT_EQ(request.env, (std::vector<std::string>{"TZ=UTC", "LC_ALL=C"}));
  QueryServiceOptions options;
  options.trace2ctl_path = "/bin/trace2ctl";
  options.db_path = "/d.db";
  const std::vector<std::string> args = child_arguments(options, 1234, request);
  EXPECT_EQ(args, (std::vector<std::string>{"/bin/trace2ctl", "--db", "/d.db", "--only-uid", "1234", "--timeout", "30",
                                            "--no-pager", "sessions", "-n"}));
}

TEST(QueryRequest, OptionsThatWidenTheViewOrNameFilesAreRefused) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"arg=--db", "arg=/etc/shadow"},
           {"arg=--db=/etc/shadow"},
           {"arg=sessions", "arg=--only-uid", "arg=0"},
           {"arg=--only-uid=0"},
           {"arg=--timeout", "arg=0"},
           {"arg=report", "arg=--html", "arg=/var/lib/trace2d/trace2d.db"},
           {"arg=report", "arg=--html=/etc/x"},
           {"arg=export", "arg=x", "arg=-o", "arg=/etc/x"},
           {"arg=export", "arg=x", "arg=-o/etc/x"},
           {"arg=export", "arg=x", "arg=--output=/etc/x"},
           // /dev/fd/3 only when the client passed a fourth descriptor.
           {"arg=export", "arg=x", "arg=-o", "arg=/dev/fd/3"},
       }) {
    EXPECT_NE(refusal(args), "") << args.back();
  }
  EXPECT_EQ(refusal({"arg=export", "arg=x", "arg=-o", "arg=/dev/fd/3"}, 4), "");
  EXPECT_EQ(refusal({"arg=export", "arg=x", "arg=-o", "arg=-"}), "");
  // A fourth descriptor that no option names, and malformed requests.
  EXPECT_NE(refusal({"arg=sessions"}, 4), "");
  EXPECT_NE(refusal({"arg=sessions"}, 2), "");
  QueryRequest request;
  EXPECT_NE(parse_query_request("trace2ctl-query 2", 3, request), "");
  EXPECT_NE(parse_query_request(fields({"arg=x"}) + "tail", 3, request), "");
  EXPECT_NE(parse_query_request(fields({"what=x"}), 3, request), "");
}

// A stand-in trace2ctl: prints its arguments, then does what ACTION says.
class ServiceFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string script = m_dir.file("fake-trace2ctl");
    std::ofstream(script) << "#!/bin/sh\n"
                             "echo \"args: $*\"\n"
                             "echo \"env: $(env | sort | tr '\\n' ' ')\"\n"
                             "case \"$*\" in *sleep*) sleep 30 ;; esac\n"
                             "exit 3\n";
    ASSERT_EQ(::chmod(script.c_str(), 0755), 0);
    QueryServiceOptions o;
    o.socket_path = m_dir.file("q.sock");
    o.db_path = m_dir.file("t.db");
    o.trace2ctl_path = script;
    o.max_per_uid = 2;
    o.max_total = 8;
    m_service.emplace(std::move(o));
    m_service->start();
  }

  // Connects and sends a request with a pipe as standard output.
  struct Client {
    int socket = -1;
    int out_read = -1;
    ~Client() {
      ::close(socket);
      ::close(out_read);
    }
  };

  std::unique_ptr<Client> ask(const std::vector<std::string>& list) {
    auto client = std::make_unique<Client>();
    client->socket = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, m_service->path().c_str());
    EXPECT_EQ(::connect(client->socket, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    std::array<int, 2> out{};
    EXPECT_EQ(::pipe2(out.data(), O_CLOEXEC), 0);
    client->out_read = out[0];
    const std::string payload = fields(list);
    const auto length = static_cast<std::uint32_t>(payload.size());
    std::string message(4, '\0');
    std::memcpy(message.data(), &length, 4);
    message += payload;
    iovec iov{message.data(), message.size()};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 3)> control{};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * 3);
    const std::array<int, 3> fds{STDIN_FILENO, out[1], STDERR_FILENO};
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof fds);
    // A refused client may find the connection closed already: not checked.
    (void)::sendmsg(client->socket, &msg, MSG_NOSIGNAL);
    ::close(out[1]);
    return client;
  }

  static std::string read_all(int fd) {
    std::string text;
    std::array<char, 4096> buffer{};
    ssize_t n = 0;
    while ((n = ::read(fd, buffer.data(), buffer.size())) > 0) {
      text.append(buffer.data(), static_cast<std::size_t>(n));
    }
    return text;
  }

  test::TempDir m_dir;
  std::optional<QueryService> m_service;
};

TEST_F(ServiceFixture, RunsTrace2ctlForTheCallersUidWithItsDescriptors) {
  auto client = ask({"db=" + m_dir.file("t.db"), "arg=sessions", "env=TZ=UTC", "env=PAGER=evil"});
  EXPECT_EQ(read_all(client->socket), "exit 3\n");
  const std::string out = read_all(client->out_read);
  EXPECT_NE(out.find("--db " + m_dir.file("t.db") + " --only-uid " + std::to_string(::getuid()) +
                     " --timeout 30 --no-pager sessions"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("TZ=UTC"), std::string::npos) << out;
  EXPECT_EQ(out.find("PAGER"), std::string::npos) << out;
}

TEST_F(ServiceFixture, RefusesAnotherDatabaseAndBadRequests) {
  auto client = ask({"db=/etc/shadow", "arg=sessions"});
  const std::string reply = read_all(client->socket);
  EXPECT_EQ(reply.rfind("error this query service answers for the database", 0), 0U) << reply;
  EXPECT_EQ(read_all(client->out_read), "");
  client = ask({"db=" + m_dir.file("t.db"), "arg=--db=/etc/shadow"});
  EXPECT_EQ(read_all(client->socket).rfind("error ", 0), 0U);
}

TEST_F(ServiceFixture, BoundsQueriesPerUidAndKillsWhenTheClientLeaves) {
  auto first = ask({"db=" + m_dir.file("t.db"), "arg=sleep"});
  auto second = ask({"db=" + m_dir.file("t.db"), "arg=sleep"});
  // Both running (their output's first line came): a third is refused.
  std::array<char, 8> byte{};
  ASSERT_GT(::read(first->out_read, byte.data(), 1), 0);
  ASSERT_GT(::read(second->out_read, byte.data(), 1), 0);
  auto third = ask({"db=" + m_dir.file("t.db"), "arg=sessions"});
  EXPECT_EQ(read_all(third->socket).rfind("error too many queries at once", 0), 0U);
  // The first client goes away: its sleeping child is killed (its output
  // pipe closes), and its place is free again.
  const auto start = std::chrono::steady_clock::now();
  ::close(first->socket);
  first->socket = -1;
  read_all(first->out_read);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  std::string reply;
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto again = ask({"db=" + m_dir.file("t.db"), "arg=sessions"});
    reply = read_all(again->socket);
    if (reply == "exit 3\n") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(reply, "exit 3\n");
  // Stopping the service kills the query still running.
  m_service.reset();
  read_all(second->out_read);
  EXPECT_EQ(read_all(second->socket), "error trace2d is stopping\n");
}

}  // namespace
}  // namespace trace2d::query
