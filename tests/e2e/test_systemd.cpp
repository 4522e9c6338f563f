// trace2d as a systemd service, tested without a running systemd: socket
// activation through systemd-socket-activate, the sd_notify protocol
// (READY=1, STOPPING=1, WATCHDOG=1) through a notify socket of the test's
// own, and the unit files through systemd-analyze, systemd-sysusers and
// systemd-tmpfiles. Each test skips when its tool is missing.

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/e2e/http_loopback.hpp"
#include "tests/support/grpc_receiver.hpp"
#include "tests/support/notify_socket.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Whatever the test runner inherited from a service manager must not leak
// into the daemons started here.
const std::vector<std::string> k_systemd_variables = {"LISTEN_FDS",    "LISTEN_PID",    "LISTEN_FDNAMES",
                                                      "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"};

std::optional<std::string> find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

fs::path systemd_source_dir() { return fs::path(TRACE2D_TEST_DATA).parent_path().parent_path() / "systemd"; }

ino_t inode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

bool is_socket(const std::string& path) { return fs::status(path).type() == fs::file_type::socket; }

// trace2d on <dir>/t.sock, <dir>/d.sock and <dir>/t.db, with `env` on top of
// a clean systemd environment; `wrapper` runs in front of it.
ProcessSpec daemon_spec(const TempDir& dir, std::map<std::string, std::string> env,
                        std::vector<std::string> wrapper = {}) {
  ProcessSpec spec;
  spec.argv = std::move(wrapper);
  spec.argv.insert(spec.argv.end(), {TRACE2D_BIN, "--socket", dir.file("t.sock"), "--dgram-socket",
                                     dir.file("d.sock"), "--db", dir.file("t.db"), "--shutdown-grace-ms", "300"});
  for (const auto& name : k_systemd_variables) {
    if (env.count(name) == 0) {
      spec.unset_env.push_back(name);
    }
  }
  spec.env = std::move(env);
  return spec;
}

bool wait_listening(Process& daemon) {
  return wait_until(
      [&] { return daemon.out_so_far().find("GIT_TRACE2_EVENT=") != std::string::npos || !daemon.running(); },
      seconds(20)) &&
         daemon.running();
}

// --- socket activation --------------------------------------------------------

// Two systemd-socket-activate in a chain give trace2d what trace2d.socket
// gives it: a stream socket (fd 3) and a datagram socket (fd 4). The outer one
// listens on the stream path and, on the first connection, execs the inner
// one, which passes fd 3 on (LISTEN_FDS), adds the datagram socket, sees the
// connection still pending and execs trace2d. So git's first connection is
// what starts trace2d, as with systemd; both stay the same process (pid).
TEST(SystemdSocketActivation, StreamAndDatagramSocketsFromTheManagerAreUsedAndLeftInPlace) {
  const auto activate = find_program("systemd-socket-activate");
  if (!activate) {
    GTEST_SKIP() << "systemd-socket-activate is not installed";
  }
  TempDir dir;
  const std::string repo = make_repo(dir, "repo");
  const std::string stream_path = dir.file("s.sock");
  const std::string dgram_path = dir.file("g.sock");
  const std::string db_path = dir.file("t.db");
  // Paths of its own for trace2d, which it must not bind: sockets from
  // systemd replace the configured ones.
  const std::string own_stream_path = dir.file("own.sock");
  const std::string own_dgram_path = dir.file("own-dgram.sock");
  ProcessSpec spec;
  spec.argv = {*activate,   "--listen=" + stream_path,
               *activate,   "--datagram", "--listen=" + dgram_path,
               TRACE2D_BIN, "--db", db_path, "--socket", own_stream_path, "--dgram-socket", own_dgram_path,
               "--shutdown-grace-ms", "300"};
  spec.unset_env = k_systemd_variables;
  Process activator(spec);

  // Until something connects, only the outer activator runs.
  ASSERT_TRUE(wait_until([&] { return is_socket(stream_path) || !activator.running(); })) << activator.err_so_far();
  ASSERT_TRUE(activator.running()) << activator.err_so_far();
  EXPECT_FALSE(fs::exists(dgram_path)) << "the inner activator ran before any connection";
  const ino_t stream_inode = inode_of(stream_path);

  // git connects and writes its events before trace2d even runs: the
  // kernel queues the connection and buffers the lines.
  const ProcessResult streamed = run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", "af_unix:stream:" + stream_path}});
  ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
  ASSERT_TRUE(wait_listening(activator)) << activator.err_so_far();
  const std::string out = activator.out_so_far();
  // trace2d names the sockets by what they are bound to (getsockname).
  EXPECT_NE(out.find("GIT_TRACE2_EVENT=af_unix:stream:" + stream_path + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("# or: GIT_TRACE2_EVENT=af_unix:dgram:" + dgram_path + "\n"), std::string::npos) << out;
  const ino_t dgram_inode = inode_of(dgram_path);
  ASSERT_NE(dgram_inode, 0u);

  const ProcessResult sent = run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", "af_unix:dgram:" + dgram_path}});
  ASSERT_EQ(sent.exit_code, 0) << sent.err;
  EXPECT_TRUE(wait_until(
      [&] {
        db::Database db = open_db(db_path);
        return db.query_int("SELECT count(*) FROM sessions WHERE status = 'complete'").value_or(0) == 2;
      },
      seconds(20)));

  activator.signal(SIGTERM);  // the activators exec'd: this is trace2d
  const ProcessResult stopped = activator.wait(seconds(30));
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;

  db::Database db = open_db(db_path);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions"), 2);
  for (const char* source : {"stream", "dgram"}) {
    SCOPED_TRACE(source);
    const std::string where = std::string(" FROM sessions WHERE source = '") + source + "'";
    EXPECT_EQ(db.query_text("SELECT status" + where), "complete");
    EXPECT_EQ(db.query_text("SELECT cmd_name" + where), "status");
    // Credentials work on sockets trace2d did not create: SO_PEERCRED on
    // the accepted connection, SCM_CREDENTIALS (trace2d sets SO_PASSCRED on
    // the passed datagram socket) for each datagram.
    EXPECT_EQ(db.query_int("SELECT peer_uid" + where), static_cast<std::int64_t>(::geteuid()));
  }
  // The socket files belong to whoever created them (systemd): still there,
  // the very same sockets.
  EXPECT_TRUE(is_socket(stream_path));
  EXPECT_TRUE(is_socket(dgram_path));
  EXPECT_EQ(inode_of(stream_path), stream_inode);
  EXPECT_EQ(inode_of(dgram_path), dgram_inode);
  EXPECT_FALSE(fs::exists(stream_path + ".lock"));
  EXPECT_FALSE(fs::exists(dgram_path + ".lock"));
  // Nor did it bind the paths it was configured with.
  EXPECT_FALSE(fs::exists(own_stream_path));
  EXPECT_FALSE(fs::exists(own_dgram_path));
  EXPECT_FALSE(fs::exists(own_stream_path + ".lock"));
}

// --- sd_notify ------------------------------------------------------------------

TEST(SystemdNotify, ReadyOnceListeningThenStoppingOnSigterm) {
  TempDir dir;
  NotifySocket notify(dir.file("notify.sock"));
  Process daemon(daemon_spec(dir, {{"NOTIFY_SOCKET", notify.path()}}));
  const auto ready = notify.wait_for("READY=1", seconds(20));
  ASSERT_TRUE(ready) << daemon.err_so_far();
  // READY=1 comes with a status line naming the targets, and only once the
  // sockets accept: connecting right now must work.
  EXPECT_NE(ready->find("STATUS=listening: af_unix:stream:" + dir.file("t.sock")), std::string::npos) << *ready;
  {
    SocketClient client(dir.file("t.sock"));
    ASSERT_TRUE(client.send(event_line("notify-1", "version", 0) + event_line("notify-1", "atexit", 1)));
  }
  // No watchdog was asked for: no pings.
  EXPECT_EQ(notify.count_during("WATCHDOG=1", milliseconds(300)), 0) << notify.all_received();

  daemon.signal(SIGTERM);
  EXPECT_TRUE(notify.wait_for("STOPPING=1", seconds(10))) << notify.all_received();
  const ProcessResult stopped = daemon.wait(seconds(30));
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(open_db(dir.file("t.db")).query_int("SELECT count(*) FROM sessions WHERE sid = 'notify-1'"), 1);
}

TEST(SystemdNotify, AnUnreachableNotifySocketIsLoggedOnceAndIgnored) {
  TempDir dir;
  Process daemon(daemon_spec(dir, {{"NOTIFY_SOCKET", dir.file("nobody-listens.sock")}, {"WATCHDOG_USEC", "100000"}}));
  ASSERT_TRUE(wait_listening(daemon)) << daemon.err_so_far();
  std::this_thread::sleep_for(milliseconds(300));  // a few failed pings
  daemon.signal(SIGTERM);
  const ProcessResult stopped = daemon.wait(seconds(30));
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  std::size_t warnings = 0;
  for (auto at = stopped.err.find("sd_notify("); at != std::string::npos; at = stopped.err.find("sd_notify(", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << stopped.err;
}

// --- watchdog ---------------------------------------------------------------------

// WATCHDOG_USEC=200000: pings every 100 ms.
constexpr const char* k_watchdog_usec = "200000";

TEST(SystemdWatchdog, PingsEveryHalfIntervalWhileIdle) {
  TempDir dir;
  NotifySocket notify(dir.file("notify.sock"));
  // WATCHDOG_PID unset: the watchdog is for whoever reads WATCHDOG_USEC.
  Process daemon(daemon_spec(dir, {{"NOTIFY_SOCKET", notify.path()}, {"WATCHDOG_USEC", k_watchdog_usec}}));
  ASSERT_TRUE(notify.wait_for("READY=1", seconds(20))) << daemon.err_so_far();
  const int pings = notify.count_during("WATCHDOG=1", milliseconds(1000));
  // ~10 expected; loose bounds for a loaded machine.
  EXPECT_GE(pings, 5) << notify.all_received();
  EXPECT_LE(pings, 13) << notify.all_received();
  daemon.signal(SIGTERM);
  const ProcessResult stopped = daemon.wait(seconds(30));
  // The pending timer was cancelled: trace2d exits at once, and cleanly.
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_LT(stopped.seconds, 10.0);
}

TEST(SystemdWatchdog, AnsweredWhenWatchdogPidIsOursThroughAnExecWrapper) {
  TempDir dir;
  NotifySocket notify(dir.file("notify.sock"));
  // What systemd does for ExecStart=: WATCHDOG_PID names the main process,
  // here a shell that then execs trace2d under the same pid.
  Process daemon(daemon_spec(dir, {{"NOTIFY_SOCKET", notify.path()}, {"WATCHDOG_USEC", k_watchdog_usec}},
                             {"/bin/sh", "-c", "WATCHDOG_PID=$$; export WATCHDOG_PID; exec \"$@\"", "sh"}));
  ASSERT_TRUE(notify.wait_for("READY=1", seconds(20))) << daemon.err_so_far();
  EXPECT_GE(notify.count_during("WATCHDOG=1", milliseconds(1000)), 5) << notify.all_received();
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(seconds(30)).exit_code, 0);
}

TEST(SystemdWatchdog, NotAnsweredWhenWatchdogPidNamesAnotherProcess) {
  TempDir dir;
  NotifySocket notify(dir.file("notify.sock"));
  // A watchdog meant for another process (pid 1 here) is not ours to feed.
  Process daemon(daemon_spec(
      dir, {{"NOTIFY_SOCKET", notify.path()}, {"WATCHDOG_USEC", k_watchdog_usec}, {"WATCHDOG_PID", "1"}}));
  ASSERT_TRUE(notify.wait_for("READY=1", seconds(20))) << daemon.err_so_far();
  EXPECT_EQ(notify.count_during("WATCHDOG=1", milliseconds(600)), 0) << notify.all_received();
  daemon.signal(SIGTERM);
  const ProcessResult stopped = daemon.wait(seconds(30));
  EXPECT_EQ(stopped.exit_code, 0);
  EXPECT_EQ(stopped.err.find("systemd watchdog"), std::string::npos) << stopped.err;
}

// Healthy = the writer committed since the last tick, or nothing is pending.
// A database locked by someone else makes events pile up uncommitted: the
// pings stop (systemd would restart trace2d after WatchdogSec), and resume
// once the writer gets through.
// A locked (or full, or read-only) database is not a hang: the writer keeps
// retrying and holds the events; a restart would lose them and fix nothing.
// So the pings go on, and everything is stored once the lock is gone.
TEST(SystemdWatchdog, KeepsPingingWhileTheWriterRetriesALockedDatabase) {
  TempDir dir;
  NotifySocket notify(dir.file("notify.sock"));
  Process daemon(daemon_spec(dir, {{"NOTIFY_SOCKET", notify.path()}, {"WATCHDOG_USEC", k_watchdog_usec}}));
  ASSERT_TRUE(notify.wait_for("READY=1", seconds(20))) << daemon.err_so_far();
  ASSERT_TRUE(notify.wait_for("WATCHDOG=1", seconds(5))) << notify.all_received();

  db::Database locker(dir.file("t.db"), db::OpenMode::read_write_create);
  locker.set_busy_timeout(5000);
  locker.exec("BEGIN EXCLUSIVE");
  {
    SocketClient client(dir.file("t.sock"));
    for (int n = 0; n < 20; ++n) {
      ASSERT_TRUE(client.send(event_line("locked-1", n == 0 ? "version" : n == 19 ? "atexit" : "data", n)));
    }
  }
  std::this_thread::sleep_for(milliseconds(400));
  notify.drain();
  const int pings_while_locked = notify.count_during("WATCHDOG=1", milliseconds(1500));
  const long committed_while_locked =
      open_db(dir.file("t.db")).query_int("SELECT count(*) FROM sessions WHERE sid = 'locked-1'").value_or(-1);
  locker.exec("COMMIT");
  EXPECT_GT(pings_while_locked, 0) << notify.all_received();
  EXPECT_EQ(committed_while_locked, 0);  // the lock really held the writer

  daemon.signal(SIGTERM);
  const ProcessResult stopped = daemon.wait(seconds(30));
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(stopped.err.find("withholding pings"), std::string::npos) << stopped.err;
  EXPECT_EQ(open_db(dir.file("t.db")).query_int("SELECT event_count FROM sessions WHERE sid = 'locked-1'"), 20);
}

// --- unit files ---------------------------------------------------------------------

ProcessResult run_tool(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.env = {{"SYSTEMD_COLORS", "0"}, {"SYSTEMD_PAGER", ""}, {"SYSTEMD_LOG_COLOR", "0"}};
  return run_process(spec, seconds(60));
}

// The units as `systemd-analyze` reads them: copies in `dir`, trace2d.service
// pointing at the built binary (verify checks that ExecStart= exists), and
// the example drop-in (network.conf) in trace2d.service.d/ when asked.
void stage_units(const TempDir& dir, bool with_network_drop_in) {
  std::string service = read_file(systemd_source_dir() / "trace2d.service");
  const std::string installed = "ExecStart=/usr/sbin/trace2d";
  ASSERT_NE(service.find(installed), std::string::npos);
  service.replace(service.find(installed), installed.size(), std::string("ExecStart=") + TRACE2D_BIN);
  write_file(dir.path() / "trace2d.service", service);
  fs::copy_file(systemd_source_dir() / "trace2d.socket", dir.path() / "trace2d.socket");
  if (with_network_drop_in) {
    fs::create_directories(dir.path() / "trace2d.service.d");
    fs::copy_file(systemd_source_dir() / "network.conf", dir.path() / "trace2d.service.d" / "network.conf");
  }
}

void expect_units_verify(bool with_network_drop_in) {
  const auto analyze = find_program("systemd-analyze");
  if (!analyze) {
    GTEST_SKIP() << "systemd-analyze is not installed";
  }
  TempDir dir;
  stage_units(dir, with_network_drop_in);
  const ProcessResult r =
      run_tool({*analyze, "verify", "--man=no", dir.file("trace2d.service"), dir.file("trace2d.socket")});
  if (r.exit_code != 0 && (r.err.find("Failed to initialize") != std::string::npos ||
                           r.err.find("Operation not permitted") != std::string::npos)) {
    GTEST_SKIP() << "systemd-analyze verify cannot run in this sandbox: " << r.err;
  }
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Unknown or misspelt settings, in the unit or a drop-in, are only
  // warnings ("... ignoring"): none.
  EXPECT_EQ(r.err, "") << r.err;
}

// systemd's exposure score of the staged service: its rating and figure.
std::optional<std::pair<double, std::string>> security_exposure(bool with_network_drop_in) {
  const auto analyze = find_program("systemd-analyze");
  if (!analyze) {
    return std::nullopt;
  }
  TempDir dir;
  stage_units(dir, with_network_drop_in);
  const ProcessResult r =
      run_tool({*analyze, "security", "--offline=yes", "--no-pager", dir.file("trace2d.service")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::smatch m;
  const std::regex overall(R"(Overall exposure level for trace2d\.service: ([0-9]+\.[0-9]+) ([A-Z]+))");
  EXPECT_TRUE(std::regex_search(r.out, m, overall)) << r.out;
  if (m.empty()) {
    return std::nullopt;
  }
  return std::pair{std::stod(m[1].str()), m[2].str()};
}

TEST(SystemdUnits, PassSystemdAnalyzeVerify) { expect_units_verify(false); }

TEST(SystemdUnits, PassSystemdAnalyzeVerifyWithTheNetworkDropIn) { expect_units_verify(true); }

TEST(SystemdUnits, SecurityExposureIsOkOrBetter) {
  if (!find_program("systemd-analyze")) {
    GTEST_SKIP() << "systemd-analyze is not installed";
  }
  const auto exposure = security_exposure(false);
  ASSERT_TRUE(exposure);
  const auto& [score, rating] = *exposure;
  RecordProperty("exposure", std::to_string(score) + " " + rating);
  // systemd's scale: SAFE < 2, OK < 5, then MEDIUM, EXPOSED, UNSAFE.
  EXPECT_TRUE(rating == "SAFE" || rating == "OK") << score << " " << rating;
  EXPECT_LE(score, 0.4);
}

// The network drop-in opens loopback IP and nothing else: still rated OK or
// better, and no worse than the bare unit by more than what IP costs
// (PrivateNetwork= 0.5, AF_INET 0.3, AF_UNIX 0.1, an allow list 0.1).
TEST(SystemdUnits, SecurityExposureWithTheNetworkDropInIsOkOrBetter) {
  if (!find_program("systemd-analyze")) {
    GTEST_SKIP() << "systemd-analyze is not installed";
  }
  const auto bare = security_exposure(false);
  const auto networked = security_exposure(true);
  ASSERT_TRUE(bare && networked);
  RecordProperty("exposure", std::to_string(networked->first) + " " + networked->second);
  EXPECT_TRUE(networked->second == "SAFE" || networked->second == "OK") << networked->first;
  EXPECT_GT(networked->first, bare->first) << "the drop-in had no effect";
  EXPECT_LE(networked->first, bare->first + 1.0);
}

// What bounds the whole service, beside trace2d's own per-uid bounds: its
// descriptors and its memory (docs/security.md).
TEST(SystemdUnits, TheServiceBoundsItsDescriptorsAndMemory) {
  const std::string unit = read_file((systemd_source_dir() / "trace2d.service").string());
  EXPECT_NE(unit.find("\nLimitNOFILE=65536\n"), std::string::npos);
  EXPECT_NE(unit.find("\nMemoryMax="), std::string::npos);
  EXPECT_NE(unit.find("\nMemoryHigh="), std::string::npos);
}

TEST(SystemdUnits, SysusersCreatesTheUserAndTmpfilesTheTraceDirectory) {
  const auto sysusers = find_program("systemd-sysusers");
  const auto tmpfiles = find_program("systemd-tmpfiles");
  if (!sysusers || !tmpfiles) {
    GTEST_SKIP() << "systemd-sysusers or systemd-tmpfiles is not installed";
  }
  // Both work on an alternative root: the test's own /etc/passwd and /var.
  TempDir root;
  fs::create_directories(root.path() / "etc");
  const ProcessResult users =
      run_tool({*sysusers, "--root=" + root.path().string(), (systemd_source_dir() / "trace2d.sysusers").string()});
  ASSERT_EQ(users.exit_code, 0) << users.err;
  const std::string passwd = read_file(root.path() / "etc/passwd");
  const std::regex entry(R"(^trace2d:x:([0-9]+):([0-9]+):[^:]*:/var/lib/trace2d:[^:\n]*nologin$)", std::regex::multiline);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(passwd, m, entry)) << passwd;
  const unsigned uid = static_cast<unsigned>(std::stoul(m[1].str()));
  EXPECT_LT(uid, 1000u) << "a system user";
  EXPECT_NE(read_file(root.path() / "etc/group").find("trace2d:x:" + m[2].str() + ":"), std::string::npos);

  const ProcessResult dirs = run_tool(
      {*tmpfiles, "--root=" + root.path().string(), "--create", (systemd_source_dir() / "trace2d.tmpfiles").string()});
  EXPECT_EQ(dirs.exit_code, 0) << dirs.err;
  struct stat st {};
  ASSERT_EQ(::stat((root.path() / "var/log/git-trace2").c_str(), &st), 0) << dirs.err;
  EXPECT_EQ(st.st_mode & 07777, 01733u);
  EXPECT_EQ(st.st_uid, uid);

  // With --root, tmpfiles resolves ACL user names on the host, where there
  // is no trace2d: check the ACL line on the host with root in its place.
  TempDir host;
  std::string conf = read_file(systemd_source_dir() / "trace2d.tmpfiles");
  conf = std::regex_replace(conf, std::regex("/var/log/git-trace2"), host.file("git-trace2"));
  conf = std::regex_replace(conf, std::regex("trace2d trace2d"), "root    root   ");
  conf = std::regex_replace(conf, std::regex("user:trace2d:"), "user:root:");
  write_file(host.path() / "t.conf", conf);
  const ProcessResult acl = run_tool({*tmpfiles, "--create", host.file("t.conf")});
  EXPECT_EQ(acl.exit_code, 0) << acl.err;
  EXPECT_EQ(acl.err.find("ACL"), std::string::npos) << acl.err;
  if (::getxattr(host.file("git-trace2").c_str(), "system.posix_acl_default", nullptr, 0) < 0 && errno == ENOTSUP) {
    GTEST_SKIP() << "the temp file system has no ACLs";
  }
  EXPECT_GT(::getxattr(host.file("git-trace2").c_str(), "system.posix_acl_default", nullptr, 0), 0)
      << "no default ACL on " << host.file("git-trace2");
}

// --- seccomp ------------------------------------------------------------------------

std::set<std::string> expand_syscall_group(const std::string& analyze, const std::string& name,
                                           std::set<std::string> seen = {}) {
  std::set<std::string> calls;
  if (name[0] != '@') {
    calls.insert(name);
    return calls;
  }
  if (!seen.insert(name).second) {
    return calls;
  }
  const ProcessResult r = run_tool({analyze, "syscall-filter", name});
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    // Members are indented; comments ("# ...") and the header are not members.
    if (line.rfind("    ", 0) != 0 || line.find('#') != std::string::npos) {
      continue;
    }
    const std::string member = line.substr(line.find_first_not_of(' '));
    for (const auto& call : expand_syscall_group(analyze, member, seen)) {
      calls.insert(call);
    }
  }
  return calls;
}

// The system calls the unit's SystemCallFilter= lines allow and deny.
struct SyscallFilter {
  std::set<std::string> allowed;
  std::set<std::string> denied;
};

SyscallFilter unit_syscall_filter(const std::string& analyze) {
  SyscallFilter filter;
  std::ifstream unit(systemd_source_dir() / "trace2d.service");
  std::string line;
  while (std::getline(unit, line)) {
    if (line.rfind("SystemCallFilter=", 0) != 0) {
      continue;
    }
    std::string value = line.substr(std::strlen("SystemCallFilter="));
    const bool deny = !value.empty() && value[0] == '~';
    std::istringstream names(deny ? value.substr(1) : value);
    std::string name;
    // systemd applies the lines in order: a later line adds calls to the
    // allow list, or takes them out, whatever an earlier line said.
    while (names >> name) {
      for (const auto& call : expand_syscall_group(analyze, name)) {
        (deny ? filter.denied : filter.allowed).insert(call);
        (deny ? filter.allowed : filter.denied).erase(call);
      }
    }
  }
  return filter;
}

// The unit's SystemCallFilter= cannot be applied without systemd; instead,
// every system call trace2d makes in a run (strace) must be one the filter
// allows. A new call outside it would get EPERM under systemd, and fail
// there only. The run: trace2d with `extra_args` over all three sources,
// git status through each, then `exercise` (given trace2d's stderr so far),
// a reload and a stop. `used` gets the calls made (none when skipped).
void expect_system_calls_pass_the_filter(const std::vector<std::string>& extra_args,
                                         const std::function<void(const std::string&)>& exercise,
                                         std::set<std::string>& used) {
  const auto analyze = find_program("systemd-analyze");
  const auto strace = find_program("strace");
  if (!analyze || !strace) {
    GTEST_SKIP() << "systemd-analyze or strace is not installed";
  }
  const SyscallFilter filter = unit_syscall_filter(*analyze);
  ASSERT_GT(filter.allowed.size(), 100u) << "no SystemCallFilter= allow list found";

  TempDir dir;
  const std::string repo = make_repo(dir, "repo");
  fs::create_directories(dir.path() / "traces");
  NotifySocket notify(dir.file("notify.sock"));
  // LeakSanitizer cannot run under ptrace: in the ASan build it would fail
  // trace2d's exit. (Harmless elsewhere.)
  // The unit starts trace2d under SCHED_BATCH (CPUSchedulingPolicy=); so
  // does chrt here, and trace2d then leaves its threads' policy alone.
  const bool unit_sets_batch = read_file((systemd_source_dir() / "trace2d.service").string())
                                   .find("\nCPUSchedulingPolicy=batch\n") != std::string::npos;
  ASSERT_TRUE(unit_sets_batch) << "the unit no longer sets CPUSchedulingPolicy=batch: start trace2d as it does";
  ProcessSpec spec = daemon_spec(dir,
                                 {{"NOTIFY_SOCKET", notify.path()},
                                  {"WATCHDOG_USEC", k_watchdog_usec},
                                  {"ASAN_OPTIONS", "detect_leaks=0"}},
                                 {"chrt", "--batch", "0", *strace, "-f", "-qq", "-o", dir.file("strace.out")});
  spec.argv.insert(spec.argv.end(), {"--watch", dir.file("traces")});
  spec.argv.insert(spec.argv.end(), extra_args.begin(), extra_args.end());
  Process traced(spec);
  if (!notify.wait_for("READY=1", seconds(30))) {
    const ProcessResult r = traced.wait(seconds(5));
    GTEST_SKIP() << "trace2d does not run under strace here: " << r.err;
  }
  // Read as systemd reads, every notification: the watchdog's pings fill a
  // socket nobody reads (10 datagrams, net.unix.max_dgram_qlen), and then
  // block trace2d's main thread, SIGTERM unhandled (a run of the exporter
  // long enough did so under strace).
  std::jthread reader([&notify](const std::stop_token& stop) {
    while (!stop.stop_requested()) {
      (void)notify.receive(milliseconds(50));
    }
  });
  for (const std::string& target :
       {"af_unix:stream:" + dir.file("t.sock"), "af_unix:dgram:" + dir.file("d.sock"), dir.file("traces")}) {
    EXPECT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", target}}).exit_code, 0);
  }
  // The finished trace file is read and deleted (unlink) once stored.
  EXPECT_TRUE(wait_until([&] { return fs::is_empty(dir.path() / "traces"); }, seconds(20)));
  exercise(traced.err_so_far());
  std::istringstream first_line(read_file(dir.file("strace.out")));
  pid_t trace2d_pid = 0;
  first_line >> trace2d_pid;  // strace writes "<pid> execve(...)" first
  ASSERT_GT(trace2d_pid, 0);
  ::kill(trace2d_pid, SIGHUP);  // reload
  std::this_thread::sleep_for(milliseconds(200));
  ::kill(trace2d_pid, SIGTERM);
  const ProcessResult stopped = traced.wait(seconds(60));
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;

  std::istringstream trace(read_file(dir.file("strace.out")));
  const std::regex call(R"(^[0-9]+ +(?:<\.\.\. )?([a-z0-9_]+)[( ])");
  std::string line;
  while (std::getline(trace, line)) {
    std::smatch m;
    if (std::regex_search(line, m, call) && line.find("+++") == std::string::npos) {
      used.insert(m[1].str());
    }
  }
  ASSERT_GT(used.size(), 20u);
  if (::geteuid() == 0) {
    // SQLite gives its journal files the database's owner, only as root
    // (User=trace2d never does, and ignores a failure anyway).
    used.erase("fchown");
  }
  for (const auto& name : used) {
    EXPECT_TRUE(filter.allowed.count(name) == 1 && filter.denied.count(name) == 0)
        << name << " is " << (filter.allowed.count(name) == 0 ? "not in the allow list" : "denied");
  }
}

TEST(SystemdSandbox, EverySystemCallTrace2dMakesPassesTheUnitsFilter) {
  std::set<std::string> used;
  expect_system_calls_pass_the_filter({}, [](const std::string&) {}, used);
}

// What the network drop-in (systemd/network.conf) is for: the OTLP exporter
// (HTTP to a collector) and /metrics. Their system calls pass the same
// filter, which the drop-in leaves as it is.
TEST(SystemdSandbox, TheOtlpExporterAndMetricsPassTheUnitsFilterToo) {
  AcceptingHttpServer collector;
  std::set<std::string> used;
  expect_system_calls_pass_the_filter(
      {"--otlp-endpoint", collector.endpoint(), "--otlp-compression", "gzip", "--metrics-listen", "127.0.0.1:0"},
      [&](const std::string& err) {
        // Three sessions exported (a round or two), one scrape served.
        EXPECT_TRUE(wait_until([&] { return collector.requests() > 0; }, seconds(30))) << err;
        std::smatch m;
        const std::regex served("metrics: serving http://127\\.0\\.0\\.1:([0-9]+)/metrics");
        ASSERT_TRUE(std::regex_search(err, m, served)) << err;
        EXPECT_EQ(http_get(std::stoi(m[1].str()), "/metrics").status, 200);
      },
      used);
  if (!used.empty()) {
    // The calls only these make were seen: the exporter's connect, the
    // metrics server's accept.
    EXPECT_EQ(used.count("connect"), 1u);
    EXPECT_EQ(used.count("accept"), 1u);
  }
}

// OTLP/gRPC: grpc++ brings threads of its own (polling, timers, its DNS
// resolver) into trace2d; their system calls pass the same filter.
TEST(SystemdSandbox, TheOtlpGrpcExporterPassesTheUnitsFilterToo) {
  GrpcReceiver collector;
  std::set<std::string> used;
  expect_system_calls_pass_the_filter(
      {"--otlp-endpoint", collector.endpoint(), "--otlp-protocol", "grpc", "--otlp-compression", "gzip"},
      [&](const std::string& err) {
        EXPECT_TRUE(wait_until([&] { return !collector.calls().empty(); }, seconds(30))) << err;
      },
      used);
  if (!used.empty()) {
    EXPECT_EQ(used.count("connect"), 1u);  // the exporter's connection was seen
  }
}

}  // namespace
}  // namespace trace2d::test
