// The /metrics endpoint end to end: the real git against a real trace2d
// with metrics on; what it serves passes Debian's `promtool check metrics`,
// and a real Prometheus (Debian's package) scrapes it and answers a query
// for a git command's histogram.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "daemon/source/asio.hpp"
#include "tests/e2e/daemon_fixture.hpp"
#include "tests/e2e/http_loopback.hpp"
#include "tests/e2e/prometheus_server.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

using asio::ip::tcp;

class MetricsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    m_daemon = std::make_unique<RunningDaemon>(
        m_dir, std::vector<std::string>{"--metrics-listen", "127.0.0.1:0", "--metrics-region", "pack-objects/*"});
    m_port = metrics_port(*m_daemon);
    ASSERT_NE(m_port, 0);
    // A fetch (with upload-pack and pack-objects and its regions beneath),
    // and a command that fails.
    const std::string clone = clone_behind(m_dir);
    const std::map<std::string, std::string> env{{"GIT_TRACE2_EVENT", m_daemon->git_target()}};
    const ProcessResult fetch = run_git(clone, {"fetch", "--no-auto-gc", "origin"}, env);
    ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
    const ProcessResult failing = run_git(clone, {"rev-parse", "--verify", "no-such-ref"}, env);
    ASSERT_EQ(failing.exit_code, 128) << failing.err;
    ASSERT_TRUE(wait_until([&] {
      const std::string body = http_get(m_port, "/metrics").body;
      return body.find(R"(trace2d_git_command_duration_seconds_count{cmd="rev-parse",exit="128"} 1)") !=
                 std::string::npos &&
             body.find(R"(cmd="fetch",exit="0")") != std::string::npos;
    })) << http_get(m_port, "/metrics").body;
  }

  // Stops cleanly and soon even with a scraper's connection open (its 10 s
  // read deadline would otherwise hold the io loop).
  void TearDown() override {
    asio::io_context io;
    tcp::socket idle(io);
    boost::system::error_code ec;
    idle.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(m_port)), ec);
    EXPECT_FALSE(ec) << ec.message();
    const auto before = std::chrono::steady_clock::now();
    const ProcessResult stopped = m_daemon->stop();
    EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5)) << stopped.err;
  }

  TempDir m_dir;
  std::unique_ptr<RunningDaemon> m_daemon;
  int m_port = 0;
};

TEST_F(MetricsE2E, ServesHealthAndHistogramsThatPromtoolAccepts) {
  const HttpAnswer text = http_get(m_port, "/metrics");
  ASSERT_EQ(text.status, 200);
  EXPECT_EQ(text.content_type, "text/plain; version=0.0.4; charset=utf-8");
  for (const char* expected : {
           R"(trace2d_git_command_duration_seconds_count{cmd="fetch",exit="0"} 1)",
           R"(trace2d_git_command_duration_seconds_bucket{cmd="fetch",exit="0",le="+Inf"} 1)",
           R"(trace2d_git_region_duration_seconds_count{category="pack-objects",label="write-pack-file"} 1)",
           R"(trace2d_queue_limit_bytes )",
           R"(trace2d_lines_read_total{source="stream"} )",
           R"(trace2d_otlp_export_enabled 0)",
           "\nprocess_cpu_seconds_total ",
           "\nprocess_resident_memory_bytes ",
           "\nprocess_open_fds ",
           "\nprocess_start_time_seconds ",
           "# TYPE trace2d_commit_latency_seconds histogram\n",
           R"(trace2d_commit_latency_seconds_bucket{le="5"} )",
       }) {
    EXPECT_NE(text.body.find(expected), std::string::npos) << expected << "\n" << text.body;
  }
  // Every line git sent was read and none was refused.
  std::smatch lines;
  ASSERT_TRUE(std::regex_search(text.body, lines, std::regex(R"(trace2d_lines_read_total\{source="stream"\} ([0-9]+))")));
  EXPECT_GT(std::stoll(lines[1]), 20);
  EXPECT_NE(text.body.find(R"(trace2d_rejects_total{source="stream"} 0)"), std::string::npos) << text.body;
  // The fetch's lines were committed: the latency histogram counted them.
  std::smatch commits;
  ASSERT_TRUE(std::regex_search(text.body, commits, std::regex(R"(trace2d_commit_latency_seconds_count ([0-9]+))")));
  EXPECT_GT(std::stoll(commits[1]), 0);

  ProcessSpec promtool;
  promtool.argv = {"promtool", "check", "metrics"};
  promtool.stdin_data = text.body;
  const ProcessResult checked = run_process(promtool);
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_EQ(checked.out + checked.err, "");  // no lint remark either

  const HttpAnswer open = http_get(m_port, "/metrics", "application/openmetrics-text;version=1.0.0");
  ASSERT_EQ(open.status, 200);
  EXPECT_EQ(open.content_type, "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_TRUE(open.body.ends_with("# EOF\n"));
  EXPECT_NE(open.body.find("# TYPE trace2d_lines_read counter\n"), std::string::npos);

  EXPECT_EQ(http_get(m_port, "/").status, 404);
}

TEST_F(MetricsE2E, ARealPrometheusScrapesIt) {
  RunningPrometheus prometheus(m_dir, m_port);
  const std::string query = R"(trace2d_git_command_duration_seconds_count{job="trace2d",cmd="fetch",exit="0"})";
  std::string last;
  const bool found = wait_until(
      [&] {
        last = prometheus.query(query);
        return last.find(R"("cmd":"fetch")") != std::string::npos;
      },
      std::chrono::seconds(20));
  EXPECT_TRUE(found) << last << "\n" << prometheus.log();
  // Scraped as OpenMetrics (Prometheus asks for it first), and healthy.
  const std::string targets = prometheus.get("/api/v1/targets");
  EXPECT_NE(targets.find(R"("health":"up")"), std::string::npos) << targets;
  const std::string region = prometheus.query(R"(trace2d_git_region_duration_seconds_count{label="write-pack-file"})");
  EXPECT_NE(region.find(R"("category":"pack-objects")"), std::string::npos) << region;
  EXPECT_EQ(prometheus.stop(), 0);
}

// The repo label, from real git in two repositories: their worktrees'
// base names, or the nickname git sends when trace2.configParams names it.
TEST(MetricsRepoLabel, RealGitInTwoRepositoriesByWorktreeAndByNickname) {
  TempDir dir;
  const std::string alpha = make_repo(dir, "alpha", 2);
  const std::string beta = make_repo(dir, "beta", 2);
  const std::string count = "trace2d_git_command_duration_seconds_count";
  {
    RunningDaemon daemon(dir, {"--metrics-listen", "127.0.0.1:0", "--metrics-repository-label", "worktree"});
    const int port = metrics_port(daemon);
    const std::map<std::string, std::string> env{{"GIT_TRACE2_EVENT", daemon.git_target()}};
    ASSERT_EQ(run_git(alpha, {"status"}, env).exit_code, 0);
    ASSERT_EQ(run_git(beta, {"status"}, env).exit_code, 0);
    ASSERT_EQ(run_git(beta, {"status"}, env).exit_code, 0);
    ASSERT_EQ(run_git(dir.path().string(), {"version"}, env).exit_code, 0);  // no repository
    std::string body;
    EXPECT_TRUE(wait_until([&] {
      body = http_get(port, "/metrics").body;
      return body.find(count + R"({cmd="status",exit="0",repo="alpha"} 1)") != std::string::npos &&
             body.find(count + R"({cmd="status",exit="0",repo="beta"} 2)") != std::string::npos &&
             body.find(count + R"({cmd="version",exit="0",repo="none"} 1)") != std::string::npos;
    })) << body;
    EXPECT_EQ(body.find(dir.path().string()), std::string::npos) << "never the path";
    EXPECT_EQ(daemon.stop().exit_code, 0);
  }
  TempDir other;
  RunningDaemon daemon(other, {"--metrics-listen", "127.0.0.1:0", "--metrics-repository-label", "nickname"});
  const int port = metrics_port(daemon);
  ASSERT_EQ(run_git(alpha, {"-c", "otel.trace2.nickname=monorepo", "status"},
                    {{"GIT_TRACE2_EVENT", daemon.git_target()}, {"GIT_TRACE2_CONFIG_PARAMS", "otel.trace2.nickname"}})
                .exit_code,
            0);
  ASSERT_EQ(run_git(beta, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
  std::string body;
  EXPECT_TRUE(wait_until([&] {
    body = http_get(port, "/metrics").body;
    return body.find(count + R"({cmd="status",exit="0",repo="monorepo"} 1)") != std::string::npos &&
           body.find(count + R"({cmd="status",exit="0",repo="none"} 1)") != std::string::npos;
  })) << body;
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// The exporter's backlog and failures, with the collector down.
TEST(MetricsExport, TheBacklogAndFailuresOfAnUnreachableCollector) {
  TempDir dir;
  const int nobody_listens = free_port();
  RunningDaemon daemon(dir, {"--metrics-listen", "127.0.0.1:0", "--otlp-endpoint",
                             "http://127.0.0.1:" + std::to_string(nobody_listens)});
  const int port = metrics_port(daemon);
  ASSERT_NE(port, 0);
  const std::string repo = make_repo(dir, "repo", 2);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
  }
  const auto figure = [&](const std::string& body, const std::string& name) -> long long {
    std::smatch match;
    return std::regex_search(body, match, std::regex("\\n" + name + " ([0-9]+)\\n")) ? std::stoll(match[1]) : -1;
  };
  std::string body;
  EXPECT_TRUE(wait_until([&] {
    body = "\n" + http_get(port, "/metrics").body;
    return figure(body, "trace2d_otlp_backlog_sessions") >= 3 && figure(body, "trace2d_otlp_export_failures_total") >= 1;
  })) << body;
  EXPECT_NE(body.find("\ntrace2d_otlp_export_enabled 1\n"), std::string::npos);
  EXPECT_EQ(figure(body, "trace2d_otlp_exported_spans_total"), 0);
  // Paused, nothing dropped, and the backlog's age known.
  EXPECT_EQ(figure(body, "trace2d_otlp_export_paused"), 1);
  EXPECT_NE(body.find("\ntrace2d_otlp_dropped_sessions_total{reason=\"bad_request\"} 0\n"), std::string::npos) << body;
  EXPECT_NE(body.find("\ntrace2d_otlp_oldest_queued_age_seconds "), std::string::npos) << body;
  EXPECT_EQ(body.find("\ntrace2d_otlp_last_success_timestamp_seconds "), std::string::npos) << "none yet";
  // The export's families pass promtool's checks too.
  ProcessSpec promtool;
  promtool.argv = {"promtool", "check", "metrics"};
  promtool.stdin_data = body.substr(1);
  const ProcessResult checked = run_process(promtool);
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_EQ(checked.out + checked.err, "");
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
}

// Issue 24, finding 9: 16 connections that asked for /metrics and never
// read their reply held every slot (each write waited out its 10 s
// deadline) once a scrape outgrew the socket buffers, and Prometheus was
// refused. Now a reply that moves nothing gives its slot to a new
// connection, and is abandoned at its write deadline.
TEST_F(MetricsE2E, ClientsThatNeverReadTheirReplyDoNotStarveAScrape) {
  // 150 commands of made-up names (one uid's share of label sets): a
  // scrape of some 300 KB, more than a non-reading client's socket takes.
  {
    SocketClient client(m_daemon->socket_path());
    for (int i = 0; i < 150; ++i) {
      const std::string sid = fmt::format("metrics-flood-{}", i);
      const std::string fields = fmt::format(R"("sid":"{}","thread":"main","time":"2026-11-27T12:00:00.000000Z")", sid);
      ASSERT_TRUE(client.send(fmt::format(
          "{{\"event\":\"version\",{},\"evt\":\"3\",\"exe\":\"2.39.5\"}}\n"
          "{{\"event\":\"start\",{},\"t_abs\":0.001,\"argv\":[\"git\",\"x\"]}}\n"
          "{{\"event\":\"cmd_name\",{},\"name\":\"made-up-command-{:03}\",\"hierarchy\":\"x\"}}\n"
          "{{\"event\":\"exit\",{},\"t_abs\":0.002,\"code\":0}}\n",
          fields, fields, fields, i, fields)));
    }
  }
  std::size_t scrape_bytes = 0;
  ASSERT_TRUE(wait_until([&] {
    scrape_bytes = http_get(m_port, "/metrics").body.size();
    return scrape_bytes > 250'000;
  })) << scrape_bytes;

  asio::io_context io;
  const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(m_port));
  std::vector<tcp::socket> non_readers;
  for (int i = 0; i < 16; ++i) {
    tcp::socket& socket = non_readers.emplace_back(io);
    socket.open(tcp::v4());
    socket.set_option(asio::socket_base::receive_buffer_size(4096));
    socket.connect(at);
    asio::write(socket, asio::buffer(std::string("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // every reply stalled

  // Scrapes succeed at once, again and again, while the 16 still hold
  // their sockets open and unread.
  for (int i = 0; i < 5; ++i) {
    const auto before = std::chrono::steady_clock::now();
    const HttpAnswer scrape = http_get(m_port, "/metrics");
    EXPECT_EQ(scrape.status, 200) << "scrape " << i;
    EXPECT_GT(scrape.body.size(), 250'000u) << "the whole scrape, " << i;
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2)) << "scrape " << i;
  }
  // Past the write deadline (2 s without progress) too.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(http_get(m_port, "/metrics").status, 200);
}

}  // namespace
}  // namespace trace2d::test
