// Work-conserving fairness and loss accounting (issue 24, findings 2, 6, 8
// and 9): a user alone loses no line to fairness; under pressure the loss
// falls on the uid that floods, each session that lost lines says so in
// every view, and the totals agree everywhere. The hostile tests run the
// flood as `nobody` (a real second uid) against a trace2d at
// RLIMIT_NOFILE 1024 while root runs the real git.

#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/e2e/http_loopback.hpp"
#include "tests/support/sanitizers.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;


// A process of uid `nobody` running `body` until it returns or stop() kills it.
class AsNobody {
 public:
  explicit AsNobody(const std::function<void()>& body) {
    const RunAs user = nobody();
    m_pid = ::fork();
    if (m_pid < 0) {
      throw std::runtime_error("fork");
    }
    if (m_pid == 0) {
      const rlimit limit{8192, 8192};
      if (::setrlimit(RLIMIT_NOFILE, &limit) != 0 || ::setgroups(0, nullptr) != 0 || ::setgid(user.gid) != 0 ||
          ::setuid(user.uid) != 0) {
        ::_exit(3);
      }
      try {
        body();
      } catch (...) {
        ::_exit(2);
      }
      ::_exit(0);
    }
  }
  ~AsNobody() { stop(); }
  AsNobody(const AsNobody&) = delete;
  AsNobody& operator=(const AsNobody&) = delete;

  void stop() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
      m_pid = -1;
    }
  }

 private:
  pid_t m_pid = -1;
};

int connect_stream(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// `connections` stream connections, each writing lines of `line_bytes`
// (data events of session "flood-<n>"), as fast as trace2d takes them,
// for ever. The long value is built once and shared by every connection:
// 128 copies of 2 MB took the flooders longer to build (under the
// sanitizers) than the tests wait for their flood.
void flood_stream(const std::string& path, int connections, std::size_t line_bytes, int first = 0) {
  struct Writer {
    int fd = -1;
    std::string version;    // sent once
    std::string data_head;  // a data line up to its long value, sent before each value
    int part = 0;           // 0: version, 1: data_head, 2: the shared value
    std::size_t sent = 0;
  };
  std::string value;
  std::vector<Writer> writers;
  for (int c = 0; c < connections; ++c) {
    int fd = connect_stream(path);
    for (int tries = 0; fd < 0 && tries < 1000; ++tries) {  // the backlog is full: let it drain
      std::this_thread::sleep_for(milliseconds(5));
      fd = connect_stream(path);
    }
    if (fd < 0) {
      continue;
    }
    const std::string sid = "flood-" + std::to_string(first + c);
    std::string data = event_line(sid, "data", 1);
    data.resize(data.size() - 3);  // its '"}' and '\n': the value is made long
    if (value.empty()) {
      value = std::string(line_bytes > data.size() ? line_bytes - data.size() : 0, 'x') + "\"}\n";
    }
    writers.push_back(Writer{fd, event_line(sid, "version", 0), std::move(data), 0, 0});
  }
  std::vector<pollfd> polls(writers.size());
  for (;;) {
    for (std::size_t i = 0; i < writers.size(); ++i) {
      polls[i] = pollfd{writers[i].fd, POLLOUT, 0};
    }
    ::poll(polls.data(), polls.size(), 100);
    for (std::size_t i = 0; i < writers.size(); ++i) {
      if ((polls[i].revents & POLLOUT) == 0) {
        continue;
      }
      Writer& w = writers[i];
      const std::string& part = w.part == 0 ? w.version : w.part == 1 ? w.data_head : value;
      const ssize_t n = ::send(w.fd, part.data() + w.sent, part.size() - w.sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        w.sent += static_cast<std::size_t>(n);
        if (w.sent == part.size()) {
          w.part = w.part == 2 ? 1 : w.part + 1;  // the version once; then data lines again and again
          w.sent = 0;
        }
      }
    }
  }
}

// Lines trace2d refuses, each a `rejects` row: `connections` connections
// writing them as fast as trace2d takes them, for ever. Half are not JSON,
// half name `foreign_sid` (another uid's session).
void flood_refused_lines(const std::string& path, int connections, const std::string& foreign_sid) {
  std::string burst;
  for (int i = 0; i < 200; ++i) {
    burst += i % 2 == 0 ? R"({"event":"data","sid":"junk-)" + std::to_string(i) + R"(","not JSON )" +
                              std::string(300, 'x') + "\n"
                        : event_line(foreign_sid, "data", i);
  }
  std::vector<std::thread> writers;
  for (int c = 0; c < connections; ++c) {
    writers.emplace_back([&] {
      SocketClient client(path);
      while (client.send(burst)) {
      }
    });
  }
  for (std::thread& writer : writers) {
    writer.join();
  }
}

// Datagrams of small sessions ("dflood-<n>-<i>"), as fast as the socket takes them, for ever.
void flood_dgram(const std::string& path, int n) {
  DgramClient client(path);
  for (int i = 0;; ++i) {
    const std::string sid = "dflood-" + std::to_string(n) + "-" + std::to_string(i / 64);
    client.send(event_line(sid, i % 64 == 0 ? "version" : "data", i));
  }
}

std::int64_t query(const std::string& db_path, const std::string& sql) {
  return open_db(db_path).query_int(sql).value_or(-1);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// The number the shutdown log gives for `what` ("dropped", "lines", ...).
std::int64_t shutdown_figure(const std::string& log, const std::string& what) {
  const std::regex figure("stopped: .*?([0-9]+) " + what);
  std::smatch m;
  if (!std::regex_search(log, m, figure)) {
    return -1;
  }
  return std::stoll(m[1]);
}

double metric_sum(const std::string& body, const std::string& name) {
  double sum = 0;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + "{", 0) == 0 || line.rfind(name + " ", 0) == 0) {
      sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return sum;
}


// One session of `lines` data events sent at once on one connection, its
// exit and atexit a moment later: what a busy process, a replay or an
// import through the socket writes.
void send_whole_session(const std::string& socket, const std::string& sid, int lines) {
  SocketClient client(socket);
  std::string burst = event_line(sid, "version", 0) + event_line(sid, "start", 0);
  for (int i = 0; i < lines; ++i) {
    burst += event_line(sid, "data", i);
    if (burst.size() >= 1024 * 1024) {
      ASSERT_TRUE(client.send(burst));
      burst.clear();
    }
  }
  ASSERT_TRUE(client.send(burst));
  std::this_thread::sleep_for(milliseconds(500));
  ASSERT_TRUE(client.send(event_line(sid, "exit", 1) + event_line(sid, "atexit", 2)));
}

// Finding 2: one connection, 120,000 lines of one session at full speed,
// alone on an idle host. The rate valve (1,000,000 lines/s by default) and
// the memory bound are work-conserving: nothing is lost while the pipeline
// has room, and what the pipeline cannot take yet waits in the kernel.
TEST(Fairness, ALoneUsersSessionOf120000LinesAtOnceIsStoredWhole) {
  TempDir dir;
  RunningDaemon daemon(dir);
  constexpr int k_lines = 120000;
  send_whole_session(daemon.socket_path(), "busy", k_lines);
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT event_count FROM sessions WHERE sid = 'busy'"), k_lines + 4);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid = 'busy'"), k_lines + 4);
  EXPECT_EQ(db.query_text("SELECT status FROM sessions WHERE sid = 'busy'"), "complete");
  EXPECT_EQ(db.query_int("SELECT lines_lost FROM sessions WHERE sid = 'busy'"), 0);
  EXPECT_EQ(db.query_int("SELECT problem_count FROM sessions WHERE sid = 'busy'"), 0);
  EXPECT_EQ(db.query_int("SELECT sum(dropped) FROM uid_stats"), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
  EXPECT_EQ(shutdown_figure(stopped.err, "dropped"), 0) << stopped.err;
}

// Whatever bound drops a session's lines, the session says how many and
// why (a column, a problem row), and no view shows it as whole: `sessions`,
// `show`, the report, and the OTLP process span. A line over
// --max-line-bytes is the bound here: it is lost to the session whose SID
// its head names.
TEST(Fairness, ASessionThatLostLinesSaysSoInEveryView) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--max-line-bytes", "4096"});
  {
    SocketClient client(daemon.socket_path());
    std::string too_long = event_line("lossy", "data", 5);
    too_long.insert(too_long.size() - 3, std::string(8192, 'x'));
    ASSERT_TRUE(client.send(event_line("lossy", "version", 0) + event_line("lossy", "start", 1) + too_long +
                            too_long + event_line("lossy", "exit", 6) + event_line("lossy", "atexit", 7)));
  }
  {
    SocketClient client(daemon.socket_path());
    ASSERT_TRUE(client.send(event_line("whole", "version", 0) + event_line("whole", "start", 1) +
                            event_line("whole", "exit", 6) + event_line("whole", "atexit", 7)));
  }
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  const std::string db_path = daemon.db_path();
  EXPECT_EQ(query(db_path, "SELECT lines_lost FROM sessions WHERE sid = 'lossy'"), 2);
  EXPECT_EQ(query(db_path, "SELECT event_count FROM sessions WHERE sid = 'lossy'"), 4);
  EXPECT_EQ(query(db_path, "SELECT count(*) FROM problems WHERE sid = 'lossy' AND seq = -1 AND message LIKE "
                           "'2 lines of this session lost%(2 too long)%'"),
            1);
  EXPECT_EQ(query(db_path, "SELECT lines_lost FROM sessions WHERE sid = 'whole'"), 0);
  // The lines stay explained as rejects too, with their sender's uid.
  EXPECT_EQ(query(db_path, "SELECT count(*) FROM rejects WHERE reason LIKE 'line too long%' AND peer_uid = " +
                               std::to_string(::getuid())),
            2);

  const ProcessResult sessions = ctl(db_path, {"sessions"});
  ASSERT_EQ(sessions.exit_code, 0) << sessions.err;
  EXPECT_NE(sessions.out.find("complete, 2 lines lost"), std::string::npos) << sessions.out;
  const ProcessResult csv = ctl(db_path, {"--format", "csv", "sessions"});
  EXPECT_NE(csv.out.find("lines_lost"), std::string::npos) << csv.out;
  const ProcessResult show = ctl(db_path, {"show", "lossy"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("complete, 2 lines lost"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("lost: 2 lines of this session lost"), std::string::npos) << show.out;
  const ProcessResult whole = ctl(db_path, {"show", "whole"});
  EXPECT_EQ(whole.out.find("lines lost"), std::string::npos) << whole.out;

  const std::string html = dir.file("report.html");
  const ProcessResult report = ctl(db_path, {"report", "--html", html});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("class=\"lost\">Not whole: 2 lines of 1 process"), std::string::npos);
  EXPECT_NE(page.find("2 lines lost"), std::string::npos);

  const ProcessResult otlp = ctl(db_path, {"export", "--format", "otlp-json", "lossy"});
  ASSERT_EQ(otlp.exit_code, 0) << otlp.err;
  EXPECT_NE(otlp.out.find(R"("key":"trace2d.lines_lost","value":{"intValue":"2"})"), std::string::npos)
      << otlp.out.substr(0, 4000);
  const ProcessResult whole_otlp = ctl(db_path, {"export", "--format", "otlp-json", "whole"});
  EXPECT_EQ(whole_otlp.out.find("trace2d.lines_lost"), std::string::npos);
}

class HostileFairness : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root, to run the flood as a second uid";
    }
    ASSERT_EQ(::chmod(m_dir.path().c_str(), 0755), 0);  // the flood must reach the sockets
    m_repo = make_repo(m_dir, "victim");
  }

  void start(std::vector<std::string> args = {}) {
    m_daemon = std::make_unique<RunningDaemon>(m_dir, std::move(args), k_service_fd_limit);
  }

  // Root's `git status` over `target`: how long it took, in seconds.
  double victim_git(const std::string& target) {
    const auto started = Clock::now();
    const ProcessResult result = run_git(m_repo, {"status", "--short"}, {{"GIT_TRACE2_EVENT", target}});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    ++m_victim_runs;
    return std::chrono::duration<double>(Clock::now() - started).count();
  }

  // Every one of root's runs so far stored complete and whole within `within`.
  bool victim_all_stored(milliseconds within) {
    return wait_until(
        [&] {
          return query(m_daemon->db_path(), "SELECT count(*) FROM sessions WHERE peer_uid = 0 AND cmd_name = "
                                            "'status' AND status = 'complete' AND lines_lost = 0") ==
                 m_victim_runs;
        },
        within);
  }

  // What root's runs look like in the store, and the pipeline's state: said
  // when they are late, to tell a read that waited from a commit that did.
  std::string victim_state() const {
    return open_db(m_daemon->db_path())
        .query_text("SELECT (SELECT group_concat(line, '; ') FROM (SELECT status || ' ' || count(*) || ' with ' || "
                    "sum(event_count) || ' events' AS line FROM sessions WHERE peer_uid = 0 GROUP BY status)) || "
                    "' | queue ' || queue_bytes || ' B (peak ' || queue_peak_bytes || '), commit latency p99 ' || "
                    "commit_latency_p99_ms || ' ms, max ' || commit_latency_max_ms || ' ms' FROM daemon_status")
        .value_or("(no status)");
  }

  std::string dgram_target() const { return "af_unix:dgram:" + m_daemon->dgram_socket_path(); }

  TempDir m_dir;
  std::string m_repo;
  std::unique_ptr<RunningDaemon> m_daemon;
  std::int64_t m_victim_runs = 0;
};

// Under pressure (a small memory bound, nobody flooding with big lines on
// many connections and with datagrams), the loss falls on the flooding
// uid alone; every session that lost lines says so, and the totals of
// dropped lines agree between uid_stats, `trace2ctl status` (source_stats),
// /metrics and the shutdown log.
TEST_F(HostileFairness, UnderPressureOnlyTheFloodingUidLosesAndTheTotalsAgree) {
  start({"--max-queue-mib", "2", "--metrics-listen", "127.0.0.1:0", "--shutdown-grace-ms", "300"});
  const int port = metrics_port(*m_daemon);
  ASSERT_GT(port, 0);
  const std::string socket = m_daemon->socket_path();
  const std::string dgram = m_daemon->dgram_socket_path();
  auto stream_flood = std::make_unique<AsNobody>([socket] { flood_stream(socket, 48, 256 * 1024); });
  auto dgram_flood = std::make_unique<AsNobody>([dgram] { flood_dgram(dgram, 0); });
  ASSERT_TRUE(wait_until([&] { return query(m_daemon->db_path(), "SELECT count(*) FROM sessions WHERE peer_uid = "
                                                                 "65534 AND lines_lost > 0") > 0; },
                         seconds(20)))
      << "the flood never pressed the pipeline";
  for (int i = 0; i < 8; ++i) {
    victim_git(m_daemon->git_target());
    victim_git(dgram_target());
  }
  EXPECT_TRUE(victim_all_stored(seconds(5 * k_slow))) << "root's git was cut or not stored";
  stream_flood.reset();
  dgram_flood.reset();
  // Once the flood's last lines are through and reported (uid_stats and
  // the status every two seconds), every view counts the same lines.
  std::this_thread::sleep_for(seconds(5));
  const std::string metrics = http_get(port, "/metrics").body;
  const std::string db_path = m_daemon->db_path();
  const std::int64_t uid_dropped = query(db_path, "SELECT sum(dropped) FROM uid_stats");
  const std::int64_t status_dropped = query(db_path, "SELECT sum(dropped_lines) FROM source_stats");
  const ProcessResult stopped = m_daemon->stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  const std::int64_t final_uid_dropped = query(db_path, "SELECT sum(dropped) FROM uid_stats");
  std::cout << "[ measured ] dropped lines: uid_stats " << uid_dropped << " (at stop " << final_uid_dropped
            << "), source_stats " << status_dropped << ", /metrics "
            << static_cast<std::int64_t>(metric_sum(metrics, "trace2d_dropped_lines_total")) << ", shutdown log "
            << shutdown_figure(stopped.err, "dropped") << std::endl;
  EXPECT_GT(uid_dropped, 0);
  EXPECT_EQ(uid_dropped, status_dropped);
  EXPECT_EQ(uid_dropped, static_cast<std::int64_t>(metric_sum(metrics, "trace2d_dropped_lines_total")));
  EXPECT_EQ(final_uid_dropped, uid_dropped);
  EXPECT_EQ(shutdown_figure(stopped.err, "dropped"), final_uid_dropped) << stopped.err;
  const ProcessResult status = ctl(db_path, {"--format", "json", "status"});
  EXPECT_EQ(status.exit_code, 3) << "the daemon has stopped (issue 26: status exits 3 then)\n" << status.err;

  // The loss is nobody's alone, and shows on its sessions.
  EXPECT_EQ(query(db_path, "SELECT coalesce(sum(dropped), 0) FROM uid_stats WHERE uid = 0"), 0);
  EXPECT_EQ(query(db_path, "SELECT count(*) FROM sessions WHERE peer_uid = 0 AND (lines_lost > 0 OR status != "
                           "'complete')"),
            0);
  EXPECT_EQ(query(db_path, "SELECT count(*) FROM rejects WHERE peer_uid = 0"), 0);
  const std::int64_t on_sessions = query(db_path, "SELECT sum(lines_lost) FROM sessions WHERE peer_uid = 65534");
  const std::int64_t unnamed =
      query(db_path, "SELECT count(*) FROM rejects WHERE peer_uid = 65534 AND reason LIKE '% lines of uid 65534 lost%'");
  std::cout << "[ measured ] nobody's sessions record " << on_sessions << " lines lost; " << unnamed
            << " rows for lines of no named session" << std::endl;
  EXPECT_GT(on_sessions, 0);
  EXPECT_EQ(query(db_path, "SELECT count(*) FROM sessions s WHERE lines_lost > 0 AND NOT EXISTS (SELECT 1 FROM "
                           "problems p WHERE p.sid = s.sid AND p.seq = -1)"),
            0);
  const std::string lossy =
      open_db(db_path).query_text("SELECT sid FROM sessions WHERE lines_lost > 0 ORDER BY lines_lost DESC").value_or("");
  const ProcessResult show = ctl(db_path, {"show", lossy});
  EXPECT_NE(show.out.find("lines lost"), std::string::npos) << show.out.substr(0, 2000);
  EXPECT_NE(show.out.find("lost: "), std::string::npos);
}

// Lines that trace2d refuses are their sender's to hold as much as events
// are: a flood of them (not JSON, or naming another user's session) fills
// only its sender's share of the memory bound. Their rows used to count in
// no uid's share: the flood never paused, and its rejects queued for the
// store without bound (1.3 GiB against a 2 MiB bound in 5 s, another
// user's git stored 7 to 17 s late).
TEST_F(HostileFairness, AFloodOfRefusedLinesStaysInItsSendersShare) {
  constexpr int k_bound_mib = 2;
  start({"--max-queue-mib", std::to_string(k_bound_mib), "--overflow-wait-ms", "200"});
  victim_git(m_daemon->git_target());
  ASSERT_TRUE(victim_all_stored(seconds(5 * k_slow)));
  const std::string foreign =
      open_db(m_daemon->db_path()).query_text("SELECT sid FROM sessions WHERE peer_uid = 0").value_or("");
  const std::string socket = m_daemon->socket_path();
  auto flood = std::make_unique<AsNobody>([socket, foreign] { flood_refused_lines(socket, 2, foreign); });
  ASSERT_TRUE(wait_until(
      [&] {
        return query(m_daemon->db_path(),
                     "SELECT count(*) FROM rejects WHERE peer_uid = "
                     "65534") > 1000;
      },
      seconds(20)))
      << "the flood never reached the store";
  std::this_thread::sleep_for(seconds(2));  // the flood at full speed
  std::vector<double> taken;
  for (int i = 0; i < 4; ++i) {
    taken.push_back(victim_git(m_daemon->git_target()));
  }
  EXPECT_TRUE(victim_all_stored(milliseconds(1000 * k_slow))) << "root's git was late: " << victim_state();
  flood.reset();
  const long peak_kib = status_kib(m_daemon->pid(), "VmHWM");
  const ProcessResult stopped = m_daemon->stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  const std::string db_path = m_daemon->db_path();
  const std::int64_t queue_peak = query(db_path, "SELECT queue_peak_bytes FROM daemon_status");
  const std::int64_t refused = query(db_path, "SELECT count(*) FROM rejects WHERE peer_uid = 65534");
  std::cout << "[ measured ] refused-line flood: " << refused << " reject rows, queue peak " << queue_peak / 1024
            << " KiB (bound " << k_bound_mib * 1024 << " KiB), peak RSS " << peak_kib / 1024
            << " MiB, root's git took at most " << *std::max_element(taken.begin(), taken.end()) << " s" << std::endl;
  // As a flood of events: past the bound by a fixed amount at most (a read
  // of up to 4 MiB; the batch being built, up to 4 MiB, is charged when it
  // is handed on; the chunks on their way). Measured here: 16.5 MiB, and
  // 13.1 MiB for as many lines of valid events; 1,317 MiB before.
  EXPECT_LT(queue_peak, (k_bound_mib + 22) * 1024 * 1024);
  if (!k_sanitized) {
    EXPECT_LT(peak_kib, 256 * 1024);
  }
  // What was past the share was dropped, counted, and nobody's alone.
  EXPECT_GT(query(db_path, "SELECT coalesce(sum(dropped), 0) FROM uid_stats WHERE uid = 65534"), 0);
  EXPECT_EQ(query(db_path, "SELECT coalesce(sum(dropped), 0) FROM uid_stats WHERE uid = 0"), 0);
  EXPECT_EQ(query(db_path,
                  "SELECT count(*) FROM sessions WHERE peer_uid = 0 AND (lines_lost > 0 OR status != "
                  "'complete')"),
            0);
  EXPECT_EQ(query(db_path, "SELECT event_count FROM sessions WHERE sid = '" + foreign + "'"),
            query(db_path, "SELECT count(*) FROM events WHERE sid = '" + foreign + "'"))
      << "the foreign lines added nothing to root's session";
}

// Finding 6 (and 9): stream connections writing 2 MB lines and two
// datagram floods, all from nobody, against root's `git status` over the
// datagram socket. Each uid holds only its share of the memory bound, and
// the datagram receiver never pauses (it drops the flooding uid's
// datagrams past its share): root's runs are all stored whole, and its git
// is not made to wait.
TEST_F(HostileFairness, AStreamAndDatagramFloodNeitherCutsNorDelaysAnotherUsersDatagramGit) {
  start();
  constexpr int k_runs = 15;
  std::vector<double> quiet;
  for (int i = 0; i < k_runs; ++i) {
    quiet.push_back(victim_git(dgram_target()));
  }
  ASSERT_TRUE(victim_all_stored(seconds(5 * k_slow)));
  const std::int64_t events_per_run =
      query(m_daemon->db_path(), "SELECT min(event_count) FROM sessions WHERE peer_uid = 0 AND cmd_name = 'status'");
  const std::string socket = m_daemon->socket_path();
  const std::string dgram = m_daemon->dgram_socket_path();
  std::vector<std::unique_ptr<AsNobody>> floods;
  for (int p = 0; p < 3; ++p) {
    floods.push_back(std::make_unique<AsNobody>([socket, p] { flood_stream(socket, 64, 2 * 1024 * 1024, 64 * p); }));
  }
  for (int p = 0; p < 2; ++p) {
    floods.push_back(std::make_unique<AsNobody>([dgram, p] { flood_dgram(dgram, p); }));
  }
  std::this_thread::sleep_for(seconds(2));  // the floods at full strength
  std::vector<double> attacked;
  for (int i = 0; i < k_runs; ++i) {
    attacked.push_back(victim_git(dgram_target()));
  }
  const auto last_run = Clock::now();
  const bool stored = victim_all_stored(seconds(6 * k_slow));
  const double stored_after = std::chrono::duration<double>(Clock::now() - last_run).count();
  const std::string late_state = stored ? "" : victim_state();
  const long rss = status_kib(m_daemon->pid(), "VmHWM");
  floods.clear();
  std::cout << "[ measured ] root's dgram git status: median " << median(quiet) * 1000 << " ms quiet, "
            << median(attacked) * 1000 << " ms under the flood (max " << *std::max_element(attacked.begin(), attacked.end()) * 1000
            << " ms), all stored " << stored_after * 1000 << " ms after the last; trace2d peak RSS " << rss / 1024
            << " MiB" << std::endl;
  EXPECT_TRUE(stored) << "root's runs not all stored complete and whole within 6 s: " << late_state;
  EXPECT_EQ(query(m_daemon->db_path(), "SELECT count(*) FROM sessions WHERE peer_uid = 0 AND cmd_name = 'status' "
                                       "AND event_count >= " + std::to_string(events_per_run)),
            2 * k_runs);
  // Two cores shared with five flooding processes: git is slower for want
  // of CPU, never for waiting on trace2d (before: 35 ms median against 3,
  // and up to 7 s).
  EXPECT_LT(median(attacked), 4 * median(quiet) + 0.1 * k_slow);
  EXPECT_LT(*std::max_element(attacked.begin(), attacked.end()), 1.0 * k_slow);
  ASSERT_EQ(m_daemon->stop().exit_code, 0);
  EXPECT_EQ(query(m_daemon->db_path(), "SELECT coalesce(sum(dropped), 0) FROM uid_stats WHERE uid = 0"), 0);
  EXPECT_EQ(query(m_daemon->db_path(), "SELECT count(*) FROM rejects WHERE peer_uid = 0"), 0);
}

// Finding 8: SIGTERM during a flood of 2 MB lines on 4 x 128 connections.
// The grace period and the last reads keep to the memory bound (a uid
// past its share has the rest dropped and counted; the last read of a
// connection is bounded), so memory stays far below the unit's MemoryMax
// (512M), what is queued stays near the bound, and the daemon exits soon
// after its grace period, with nothing of root's lost.
TEST_F(HostileFairness, SigtermDuringABigLineFloodKeepsTheBoundAndExitsPromptly) {
  start({"--shutdown-grace-ms", "2000"});  // the unit's, as in the finding
  victim_git(m_daemon->git_target());
  victim_git(dgram_target());
  ASSERT_TRUE(victim_all_stored(seconds(5 * k_slow)));
  const std::string socket = m_daemon->socket_path();
  std::vector<std::unique_ptr<AsNobody>> floods;
  for (int p = 0; p < 4; ++p) {
    floods.push_back(std::make_unique<AsNobody>([socket, p] { flood_stream(socket, 128, 2 * 1024 * 1024, 128 * p); }));
  }
  std::this_thread::sleep_for(seconds(4));
  const pid_t pid = m_daemon->pid();
  std::atomic<long> peak_kib{0};
  std::atomic<bool> sampling{true};
  std::thread sampler([&] {
    while (sampling.load()) {
      const long now = status_kib(pid, "VmHWM");
      if (now > peak_kib.load()) {
        peak_kib.store(now);
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
  });
  const auto started = Clock::now();
  // The last reads end each flooding connection's unfinished line as a
  // reject (its head kept): up to 512 rows of 64 KiB to commit, which
  // takes ASan several times longer than anything else here.
  const ProcessResult stopped = m_daemon->stop(seconds(k_sanitized ? 90 : 30));
  const double taken = std::chrono::duration<double>(Clock::now() - started).count();
  sampling.store(false);
  sampler.join();
  floods.clear();
  const std::regex queued("peak queued ([0-9.]+) MiB");
  std::smatch m;
  const double peak_queued = std::regex_search(stopped.err, m, queued) ? std::stod(m[1]) : -1;
  std::cout << "[ measured ] SIGTERM under 4 x 128 connections of 2 MB lines: exit after " << taken
            << " s (grace 2 s), peak RSS " << peak_kib.load() / 1024 << " MiB, peak queued " << peak_queued
            << " MiB (bound 16)" << std::endl;
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  const std::int64_t flood_bytes = query(m_daemon->db_path(), "SELECT bytes FROM source_stats WHERE source = 'stream'");
  const std::int64_t cut = query(m_daemon->db_path(), "SELECT count(*) FROM rejects WHERE peer_uid = 65534");
  std::cout << "[ measured ] the flood: " << flood_bytes / (1024 * 1024) << " MiB read, " << cut
            << " of its lines rejects (cut short)" << std::endl;
  EXPECT_GT(flood_bytes, 64 * 1024 * 1024) << "the flood did not reach trace2d";
  if (!k_sanitized) {  // timed in the optimised build; the sanitized one checks the rest
    EXPECT_LT(taken, 5.0) << "exit took too long after the grace period";
  }
  if (!k_sanitized) {
    EXPECT_LT(peak_kib.load(), 256 * 1024) << "far below the unit's MemoryMax of 512M";
  }
  EXPECT_GE(peak_queued, 0) << stopped.err;
  EXPECT_LT(peak_queued, 3 * 16.0) << "the memory bound held during the shutdown";
  EXPECT_EQ(query(m_daemon->db_path(), "SELECT count(*) FROM sessions WHERE peer_uid = 0 AND (lines_lost > 0 OR "
                                       "status != 'complete')"),
            0);
  EXPECT_EQ(query(m_daemon->db_path(), "SELECT coalesce(sum(dropped), 0) FROM uid_stats WHERE uid = 0"), 0);
}

}  // namespace
}  // namespace trace2d::test
