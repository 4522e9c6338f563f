// Faults a real trace2d must survive (docs/reliability.md lists them with
// what was observed):
//
//   - SIGKILL at random moments under load, then a restart on the same
//     database: intact, nothing duplicated, sessions resume, a bounded loss;
//   - a full disk (a small tmpfs): keeps draining, holds events up to its
//     memory bound, says so, resumes when space returns;
//   - the database removed, or made read-only, while it runs;
//   - an fd limit of 64 with 200 clients, 1,000 slow connections for a
//     minute, idle connections, a client sending one byte at a time.
//
// Each test measures what it can (losses, CPU time, memory) and prints it
// with a "[ measured ]" prefix.

#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/sanitizers.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// ---------------------------------------------------------------- helpers


// What /proc says about a process: CPU time used, memory, open fds.
struct ProcStats {
  double cpu_seconds = 0;     // utime + stime
  long rss_kib = 0;           // VmRSS
  long peak_rss_kib = 0;      // VmHWM
  long open_fds = 0;
};

ProcStats proc_stats(pid_t pid) {
  ProcStats stats;
  const std::string base = "/proc/" + std::to_string(pid);
  {
    // Fields 14 and 15 (utime, stime) follow the command name, which may
    // hold spaces: count from the last ')'.
    const std::string stat = read_file(base + "/stat");
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string field;
    long utime = 0;
    long stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) {
        utime = std::stol(field);
      } else if (i == 15) {
        stime = std::stol(field);
      }
    }
    stats.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  std::istringstream status(read_file(base + "/status"));
  for (std::string line; std::getline(status, line);) {
    const auto value = [&] { return std::stol(line.substr(line.find(':') + 1)); };
    if (line.rfind("VmRSS:", 0) == 0) {
      stats.rss_kib = value();
    } else if (line.rfind("VmHWM:", 0) == 0) {
      stats.peak_rss_kib = value();
    }
  }
  stats.open_fds = std::distance(std::filesystem::directory_iterator(base + "/fd"),
                                 std::filesystem::directory_iterator());
  return stats;
}

void measured(const std::string& what) {
  std::cout << "[ measured ] " << what << std::endl;
}

// The lines of one git-shaped session: version, start, data..., atexit.
// `n` numbers the event within its session, so every line is unique.
std::string session_line(const std::string& sid, int n, int length) {
  const char* kind = n == 0 ? "version" : n == 1 ? "start" : n == length - 1 ? "atexit" : "data";
  return event_line(sid, kind, n);
}

// Stored lines of a session, by seq: coalesce(raw, json) is what arrived.
std::vector<std::string> stored_lines(db::Database& db, const std::string& sid) {
  db::Statement stmt = db.prepare("SELECT seq, coalesce(raw, json) FROM events WHERE sid = ? ORDER BY seq");
  stmt.bind_text(1, sid);
  std::vector<std::string> lines;
  while (stmt.step()) {
    EXPECT_EQ(stmt.column_int(0), static_cast<std::int64_t>(lines.size())) << sid << ": seq not 0..n-1";
    lines.emplace_back(stmt.column_blob(1));
  }
  return lines;
}

// Runs a command, returns whether it exited 0 (its stderr in `err`).
bool run(const std::vector<std::string>& argv, std::string* err = nullptr) {
  ProcessSpec spec;
  spec.argv = argv;
  const ProcessResult result = run_process(spec, seconds(30));
  if (err != nullptr) {
    *err = result.err;
  }
  return result.exit_code == 0;
}

// A tmpfs mounted over a directory for the test's lifetime.
class TmpfsMount {
 public:
  TmpfsMount(std::string path, const std::string& size) : m_path(std::move(path)) {
    m_mounted = run({"mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0755", "tmpfs", m_path}, &m_error);
  }
  ~TmpfsMount() {
    if (m_mounted && !run({"umount", m_path})) {
      run({"umount", "-l", m_path});  // something still holds it: detach now, free later
    }
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  [[nodiscard]] bool mounted() const { return m_mounted; }
  [[nodiscard]] const std::string& error() const { return m_error; }

 private:
  std::string m_path;
  bool m_mounted = false;
  std::string m_error;
};

// chattr +i on files (writes through open descriptors then fail with
// EPERM, even for root); undone when the guard goes.
class ImmutableFiles {
 public:
  explicit ImmutableFiles(std::vector<std::string> paths) : m_paths(std::move(paths)) {
    std::vector<std::string> argv = {"chattr", "+i"};
    argv.insert(argv.end(), m_paths.begin(), m_paths.end());
    m_applied = run(argv, &m_error);
  }
  ~ImmutableFiles() { release(); }
  ImmutableFiles(const ImmutableFiles&) = delete;
  ImmutableFiles& operator=(const ImmutableFiles&) = delete;

  void release() {
    if (m_applied) {
      std::vector<std::string> argv = {"chattr", "-i"};
      argv.insert(argv.end(), m_paths.begin(), m_paths.end());
      run(argv);
      m_applied = false;
    }
  }
  [[nodiscard]] bool applied() const { return m_applied; }
  [[nodiscard]] const std::string& error() const { return m_error; }

 private:
  std::vector<std::string> m_paths;
  bool m_applied = false;
  std::string m_error;
};

// Clients writing git-shaped sessions of `length` events, one connection
// per session, until told to stop (mid-session too); they count what they
// wrote and time each write.
class SessionWriters {
 public:
  struct Totals {
    long lines = 0;
    double max_send_seconds = 0;
  };

  SessionWriters(std::string socket, int clients, const std::string& prefix, std::chrono::microseconds pace,
                 int length = 40)
      : m_socket(std::move(socket)), m_length(length) {
    for (int c = 0; c < clients; ++c) {
      m_threads.emplace_back([this, c, prefix, pace] { write_sessions(prefix + std::to_string(c) + "-", pace); });
    }
  }
  ~SessionWriters() { stop(); }
  SessionWriters(const SessionWriters&) = delete;
  SessionWriters& operator=(const SessionWriters&) = delete;

  Totals stop() {
    m_stop = true;
    for (auto& t : m_threads) {
      if (t.joinable()) {
        t.join();
      }
    }
    std::lock_guard lock(m_mutex);
    return m_totals;
  }
  [[nodiscard]] long lines_so_far() const { return m_lines.load(); }

 private:
  void write_sessions(const std::string& prefix, std::chrono::microseconds pace) {
    Totals mine;
    for (int session = 0; !m_stop; ++session) {
      const std::string sid = prefix + std::to_string(session);
      SocketClient client(m_socket);
      for (int n = 0; n < m_length && !m_stop; ++n) {
        const auto before = Clock::now();
        if (!client.send(session_line(sid, n, m_length))) {
          ADD_FAILURE() << "send failed for " << sid;
          break;
        }
        mine.max_send_seconds =
            std::max(mine.max_send_seconds, std::chrono::duration<double>(Clock::now() - before).count());
        ++mine.lines;
        m_lines.fetch_add(1);
        std::this_thread::sleep_for(pace);
      }
    }
    std::lock_guard lock(m_mutex);
    m_totals.lines += mine.lines;
    m_totals.max_send_seconds = std::max(m_totals.max_send_seconds, mine.max_send_seconds);
  }

  std::string m_socket;
  int m_length;
  std::atomic<bool> m_stop{false};
  std::atomic<long> m_lines{0};
  std::mutex m_mutex;
  Totals m_totals;
  std::vector<std::thread> m_threads;
};

// The log's distinct messages, timestamp cut and numbers as N, each with
// how often it came: "12 x [trace2d] [error] store: commit failed...".
std::string log_summary(const std::string& log) {
  const std::regex number(R"(\b\d+\b)");
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const std::string message = std::regex_replace(line.substr(line.find(']') + 2), number, "N");
    if (counts[message]++ == 0) {
      order.push_back(message);
    }
  }
  std::string summary;
  for (const std::string& message : order) {
    summary += "  " + std::to_string(counts[message]) + " x " + message + "\n";
  }
  return summary;
}

// ------------------------------------------------------- crash consistency

// One connection's worth of a session in one daemon run.
struct Segment {
  std::string sid;
  int round = 0;
  std::vector<std::string> lines;  // written (send() succeeded), without '\n'
  std::vector<Clock::time_point> written_at;
};

// A client of the crash test: sessions of `length` events, one event per
// `pace`, over one connection each; a session cut by a kill is continued,
// same SID, after the restart.
class CrashClient {
 public:
  CrashClient(std::string prefix, int length, std::chrono::microseconds pace)
      : m_prefix(std::move(prefix)), m_length(length), m_pace(pace) {}

  // Writes until the daemon dies or `stop` is set; then finishes the
  // session it is in only when `finish` (the last, clean round).
  void run_round(const std::string& socket, int round, const std::atomic<bool>& stop, bool finish) {
    while (!stop || (finish && m_next > 0)) {
      if (m_next == 0) {
        m_sid = m_prefix + std::to_string(m_sessions++);
      }
      std::unique_ptr<SocketClient> client;
      try {
        client = std::make_unique<SocketClient>(socket);
      } catch (const std::runtime_error&) {
        return;  // the daemon is gone
      }
      Segment segment{m_sid, round, {}, {}};
      bool alive = true;
      while (m_next < m_length && (!stop || finish)) {
        std::string line = session_line(m_sid, m_next, m_length);
        if (!client->send(line)) {
          alive = false;
          break;
        }
        line.pop_back();
        segment.lines.push_back(std::move(line));
        segment.written_at.push_back(Clock::now());
        ++m_next;
        std::this_thread::sleep_for(m_pace);
      }
      if (!segment.lines.empty()) {
        m_segments.push_back(std::move(segment));
      }
      if (m_next == m_length) {
        m_next = 0;
      }
      if (!alive) {
        return;
      }
    }
  }

  [[nodiscard]] const std::vector<Segment>& segments() const { return m_segments; }

 private:
  std::string m_prefix;
  int m_length;
  std::chrono::microseconds m_pace;
  std::string m_sid;
  int m_sessions = 0;
  int m_next = 0;  // next event of the current session
  std::vector<Segment> m_segments;
};

// Events stored so far of the two long clients' sessions (crash-6-*, crash-7-*).
std::pair<std::int64_t, std::int64_t> long_session_events(const std::string& db_path) {
  return {query_count(db_path, "SELECT coalesce(sum(event_count), 0) FROM sessions WHERE sid LIKE 'crash-6-%'"),
          query_count(db_path, "SELECT coalesce(sum(event_count), 0) FROM sessions WHERE sid LIKE 'crash-7-%'")};
}

TEST(Faults, CrashConsistencyTwentySigkillsUnderLoad) {
  constexpr int k_kills = 20;
  // A line written this long before a kill must be stored. What a kill can
  // lose is what trace2d has not committed yet: lines still in the kernel's
  // socket buffers, and the queue up to the next commit (every 10 ms). On an
  // idle machine that is about 10 ms of writes; with the CPU shared, up to a
  // few hundred ms were seen; 2 s leaves room for a busy CI host.
  constexpr auto k_loss_bound = milliseconds(2000);
  TempDir dir;
  // Six clients like short git commands (40 events, one per 0.5 ms), two
  // like long ones (200 events, one per 10 ms: every kill cuts them
  // mid-session, with most of the session stored).
  std::vector<CrashClient> clients;
  for (int c = 0; c < 6; ++c) {
    clients.emplace_back("crash-" + std::to_string(c) + "-", 40, std::chrono::microseconds(500));
  }
  for (int c = 6; c < 8; ++c) {
    clients.emplace_back("crash-" + std::to_string(c) + "-", 200, std::chrono::microseconds(10000));
  }
  std::vector<Clock::time_point> killed_at;
  std::mt19937 random(20261121);
  for (int round = 0; round <= k_kills; ++round) {
    const bool last = round == k_kills;
    RunningDaemon daemon(dir);
    {
      db::Database db = open_db(daemon.db_path());
      ASSERT_EQ(db.query_text("PRAGMA integrity_check"), "ok") << "after kill " << round;
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (auto& client : clients) {
      threads.emplace_back([&, round, last] { client.run_round(daemon.socket_path(), round, stop, last); });
    }
    // The kill comes at a random moment after this run has stored events of
    // both long sessions, so that every kill cuts them with a part stored
    // on each side. A fixed delay alone raced the start-up of a slow
    // (sanitized) build: a kill before the first commit resumes nothing.
    const auto stored_before = long_session_events(daemon.db_path());
    const auto deadline = Clock::now() + seconds(30);
    while (!last && Clock::now() < deadline) {
      const auto stored_now = long_session_events(daemon.db_path());
      if (stored_now.first > stored_before.first && stored_now.second > stored_before.second) {
        break;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(0, 380)(random)));
    if (last) {
      stop = true;  // clients finish their sessions, then a clean stop
      for (auto& t : threads) {
        t.join();
      }
      const ProcessResult result = daemon.stop();
      ASSERT_EQ(result.exit_code, 0) << result.err;
      break;
    }
    killed_at.push_back(Clock::now());
    daemon.process().signal(SIGKILL);
    const ProcessResult result = daemon.process().wait(seconds(10));
    ASSERT_EQ(result.term_signal, SIGKILL);
    stop = true;
    for (auto& t : threads) {
      t.join();
    }
  }

  // Every session: its stored events are, in order, a prefix of what each
  // of its connections wrote (a kill loses the tail of the lines in flight,
  // never one in the middle, never one twice).
  db::Database db = open_db(dir.file("t.db"));
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(db.query_int("SELECT count(*) FROM (SELECT sid, seq FROM events GROUP BY sid, seq HAVING count(*) > 1)"), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions s WHERE event_count !="
                         " (SELECT count(*) FROM event_store e WHERE e.session = s.id)"),
            0);
  std::map<std::string, std::vector<const Segment*>> by_sid;
  for (const auto& client : clients) {
    for (const Segment& segment : client.segments()) {
      by_sid[segment.sid].push_back(&segment);
    }
  }
  std::vector<long> lost_per_kill(k_kills, 0);
  std::vector<double> oldest_loss_ms(k_kills, 0);
  long written = 0;
  int resumed_sessions = 0;
  int resumptions = 0;  // a session stored on both sides of a restart
  for (const auto& [sid, segments] : by_sid) {
    const std::vector<std::string> stored = stored_lines(db, sid);
    std::size_t at = 0;
    int rounds_with_events = 0;
    for (const Segment* segment : segments) {
      written += static_cast<long>(segment->lines.size());
      std::size_t kept = 0;
      while (kept < segment->lines.size() && at < stored.size() && stored[at] == segment->lines[kept]) {
        ++kept;
        ++at;
      }
      rounds_with_events += kept > 0 ? 1 : 0;
      const std::size_t lost = segment->lines.size() - kept;
      if (lost == 0) {
        continue;
      }
      ASSERT_LT(segment->round, k_kills) << sid << ": lines lost without a kill";
      lost_per_kill[static_cast<std::size_t>(segment->round)] += static_cast<long>(lost);
      const auto age = killed_at[static_cast<std::size_t>(segment->round)] - segment->written_at[kept];
      const double age_ms = std::chrono::duration<double, std::milli>(age).count();
      oldest_loss_ms[static_cast<std::size_t>(segment->round)] =
          std::max(oldest_loss_ms[static_cast<std::size_t>(segment->round)], age_ms);
      EXPECT_LT(age, k_loss_bound) << sid << ": a line written " << age_ms << " ms before kill "
                                   << segment->round << " was lost";
    }
    EXPECT_EQ(at, stored.size()) << sid << ": stored events that were not written in this order";
    resumed_sessions += rounds_with_events > 1 ? 1 : 0;
    resumptions += std::max(0, rounds_with_events - 1);
  }
  // Sessions cut by a kill went on after the restart, numbering continued:
  // the long sessions at (nearly) every kill.
  EXPECT_GE(resumptions, k_kills);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE status = 'running'"), 0);
  const long max_lost = *std::max_element(lost_per_kill.begin(), lost_per_kill.end());
  const double max_age = *std::max_element(oldest_loss_ms.begin(), oldest_loss_ms.end());
  long total_lost = 0;
  for (const long lost : lost_per_kill) {
    total_lost += lost;
  }
  measured(std::to_string(k_kills) + " SIGKILLs: " + std::to_string(written) + " events written, " +
           std::to_string(total_lost) + " lost; at most " + std::to_string(max_lost) +
           " per kill; oldest lost line written " + std::to_string(static_cast<int>(max_age)) +
           " ms before its kill; " + std::to_string(resumed_sessions) + " sessions resumed across " +
           std::to_string(resumptions) + " restarts");
  ::testing::Test::RecordProperty("max_events_lost_per_kill", static_cast<int>(max_lost));
  ::testing::Test::RecordProperty("oldest_lost_line_ms", static_cast<int>(max_age));
}

// --------------------------------------------------------------- disk full

TEST(Faults, DiskFullHoldsEventsUpToTheBoundAndResumesWhenSpaceReturns) {
  TempDir dir;
  // The whole test directory (sockets, database) lives on a small tmpfs.
  TmpfsMount tmpfs(dir.path().string(), "16m");
  if (!tmpfs.mounted()) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << tmpfs.error();
  }
  constexpr int k_overflow_wait_ms = 300;
  RunningDaemon daemon(dir, {"--max-queue-mib", "1", "--overflow-wait-ms", std::to_string(k_overflow_wait_ms),
                             "--status-interval-ms", "200"});
  // Fill the tmpfs but for 256 KiB with a file of our own.
  const std::string filler = dir.file("filler");
  {
    std::ofstream out(filler, std::ios::binary);
    const std::string block(64 * 1024, 'f');
    while (out.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  const auto free_now = std::filesystem::space(dir.path()).available;
  std::filesystem::resize_file(filler, std::filesystem::file_size(filler) - 256 * 1024 + free_now);
  ASSERT_LE(std::filesystem::space(dir.path()).available, 300U * 1024);

  const pid_t pid = daemon.pid();
  const long rss_before = proc_stats(pid).peak_rss_kib;
  SessionWriters writers(daemon.socket_path(), 4, "full-", std::chrono::microseconds(100));
  // And one chatty git on a single connection: its socket buffer fills
  // whenever trace2d stops reading.
  SessionWriters chatty(daemon.socket_path(), 1, "full-chatty-", std::chrono::microseconds(50), 1000000);
  const bool full = wait_until([&] { return daemon.process().err_so_far().find("full") != std::string::npos; },
                               seconds(30));
  ASSERT_TRUE(full) << "no 'disk full' error logged: " << daemon.process().err_so_far();
  // Stay full long enough to reach the memory bound and drop.
  std::this_thread::sleep_for(seconds(3));
  ASSERT_TRUE(daemon.process().running());
  const long written_while_full = writers.lines_so_far() + chatty.lines_so_far();
  const long rss_full = proc_stats(pid).peak_rss_kib;

  // Space returns: trace2d must write again by itself, while clients go on.
  const auto stored_now = [&] { return query_count(daemon.db_path(), "SELECT count(*) FROM event_store"); };
  const std::int64_t stored_while_full = stored_now();
  std::filesystem::remove(filler);
  const bool resumed = wait_until([&] { return stored_now() > stored_while_full + 1000; }, seconds(30));
  std::this_thread::sleep_for(seconds(1));
  SessionWriters::Totals totals = writers.stop();
  const SessionWriters::Totals chatty_totals = chatty.stop();
  totals.lines += chatty_totals.lines;
  totals.max_send_seconds = std::max(totals.max_send_seconds, chatty_totals.max_send_seconds);
  const ProcessResult result = daemon.stop();
  ASSERT_TRUE(resumed) << "nothing committed after space returned: " << result.err;
  ASSERT_EQ(result.exit_code, 0) << result.err;

  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
  const std::int64_t stored = db.query_int("SELECT count(*) FROM events WHERE sid LIKE 'full-%'").value_or(-1);
  const std::int64_t dropped = db.query_int("SELECT coalesce(sum(dropped), 0) FROM uid_stats").value_or(-1);
  // Every line written is an event, or counted as dropped at the memory
  // bound: per uid, per source, and on the session it belonged to (issue
  // 24: those counts used to be rejects rows, one per burst, that named no
  // session).
  EXPECT_EQ(stored + dropped, totals.lines);
  EXPECT_EQ(db.query_int("SELECT dropped_lines FROM source_stats WHERE source = 'stream'"), dropped);
  EXPECT_EQ(db.query_int("SELECT coalesce(sum(lines_lost), 0) FROM sessions WHERE sid LIKE 'full-%'"), dropped);
  EXPECT_GT(db.query_int("SELECT failed_commits FROM daemon_status"), 0);
  // The bound is checked before each read, and one read takes up to 4 MiB:
  // the queue may pass the bound by about that much, never more.
  const std::int64_t queue_peak = db.query_int("SELECT queue_peak_bytes FROM daemon_status").value_or(-1);
  EXPECT_LT(queue_peak, (1 + 4 + 1) * 1024 * 1024);
  // git never waited much longer than the overflow wait.
  EXPECT_LT(totals.max_send_seconds, k_overflow_wait_ms / 1000.0 + 1.5);
  // Held in memory up to the bound (1 MiB), not without bound.
  EXPECT_LT(rss_full - rss_before, 64 * 1024 + k_sanitizer_kib) << "KiB";
  EXPECT_NE(result.err.find("holding"), std::string::npos) << result.err;
  measured("disk full: " + std::to_string(totals.lines) + " lines written (" + std::to_string(written_while_full) +
           " before space returned), " + std::to_string(stored) + " stored, " + std::to_string(dropped) +
           " dropped at the 1 MiB bound (queue peak " + std::to_string(queue_peak / 1024) + " KiB); longest write " +
           std::to_string(static_cast<int>(totals.max_send_seconds * 1000)) + " ms; peak RSS " +
           std::to_string(rss_full / 1024) + " MiB (" + std::to_string(rss_before / 1024) + " MiB before); log:\n" +
           log_summary(result.err));
}

// ------------------------------------------ database removed or read-only

TEST(Faults, DatabaseRemovedWhileRunningKeepsServingGitAndSaysSo) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--status-interval-ms", "200"});
  {
    SocketClient client(daemon.socket_path());
    for (int n = 0; n < 10; ++n) {
      ASSERT_TRUE(client.send(session_line("before-removal", n, 10)));
    }
  }
  ASSERT_TRUE(wait_until([&] {
    return query_count(daemon.db_path(), "SELECT count(*) FROM events WHERE sid = 'before-removal'") == 10;
  }));
  const std::size_t log_before = daemon.process().err_so_far().size();
  // The database file last: once it is gone trace2d may create new -wal and
  // -shm files at any moment, which removing the old ones after it could hit.
  for (const char* suffix : {"-wal", "-shm", ""}) {
    std::filesystem::remove(daemon.db_path() + suffix);
  }
  // git keeps writing; it must not notice anything. Every event type and the
  // thread and file names of these lines were interned before the removal:
  // the new file must get those names too.
  std::vector<std::string> sent;
  double slowest = 0;
  {
    SocketClient client(daemon.socket_path());
    for (int n = 0; n < 200; ++n) {
      sent.push_back(session_line("after-removal", n, 200));
      const auto before = Clock::now();
      ASSERT_TRUE(client.send(sent.back()));
      slowest = std::max(slowest, std::chrono::duration<double>(Clock::now() - before).count());
    }
  }
  const auto said_so = [&] {
    return daemon.process().err_so_far().find("[error]", log_before) != std::string::npos;
  };
  const bool logged = wait_until(said_so, seconds(3));
  // Polled while trace2d creates the new file: missing or without tables
  // for a moment.
  ASSERT_TRUE(wait_until([&] {
    try {
      return query_count(daemon.db_path(), "SELECT count(*) FROM events WHERE sid = 'after-removal'") == 200;
    } catch (const db::SqliteError&) {
      return false;
    }
  }, seconds(10))) << "not in the new file while trace2d runs:\n" << daemon.process().err_so_far().substr(log_before);
  ASSERT_TRUE(daemon.process().running()) << "trace2d died after its database was removed";
  const ProcessResult result = daemon.stop();
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.term_signal, 0) << result.err;
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_LT(slowest, 0.5) << "git waited for trace2d";
  measured("database removed while running: exit " + std::to_string(result.exit_code) + "; log since:\n" +
           log_summary(result.err.substr(log_before)));
  ASSERT_TRUE(logged) << result.err;
  const std::size_t error_at = result.err.find("[error]", log_before);
  const std::string error_line = result.err.substr(error_at, result.err.find('\n', error_at) - error_at);
  EXPECT_NE(error_line.find("'" + daemon.db_path() + "'"), std::string::npos) << "the error names the database";
  EXPECT_NE(error_line.find("removed"), std::string::npos) << error_line;

  // Everything since the removal is in the new file, read back exactly as
  // sent (names resolved); what the removed file held is gone.
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid = 'after-removal'"), 200);
  std::vector<std::string> expected;
  for (const std::string& line : sent) {
    expected.push_back(line.substr(0, line.size() - 1));  // without its newline
  }
  EXPECT_EQ(stored_lines(db, "after-removal"), expected);
  EXPECT_EQ(db.query_text("SELECT status FROM sessions WHERE sid = 'after-removal'"), "complete");
  EXPECT_EQ(db.query_int("SELECT event_count FROM sessions WHERE sid = 'after-removal'"), 200);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid = 'before-removal'"), 0);
  EXPECT_EQ(db.query_int("SELECT database_recreated FROM daemon_status"), 1);
}

TEST(Faults, DatabaseMadeReadOnlyWhileRunningIsLoggedAndRetried) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--status-interval-ms", "200"});
  {
    SocketClient client(daemon.socket_path());
    for (int n = 0; n < 10; ++n) {
      ASSERT_TRUE(client.send(session_line("before-readonly", n, 10)));
    }
  }
  ASSERT_TRUE(wait_until([&] {
    return query_count(daemon.db_path(), "SELECT count(*) FROM events WHERE sid = 'before-readonly'") == 10;
  }));
  // chmod means nothing to root or to descriptors already open; the
  // immutable attribute refuses writes through them too.
  std::vector<std::string> files;
  for (const char* suffix : {"", "-wal"}) {
    if (std::filesystem::exists(daemon.db_path() + suffix)) {
      files.push_back(daemon.db_path() + suffix);
    }
  }
  ImmutableFiles read_only(files);
  if (!read_only.applied()) {
    GTEST_SKIP() << "cannot make the database immutable here: " << read_only.error();
  }
  double slowest = 0;
  {
    SocketClient client(daemon.socket_path());
    for (int n = 0; n < 200; ++n) {
      const auto before = Clock::now();
      ASSERT_TRUE(client.send(session_line("while-readonly", n, 200)));
      slowest = std::max(slowest, std::chrono::duration<double>(Clock::now() - before).count());
    }
  }
  const bool logged = wait_until(
      [&] { return daemon.process().err_so_far().find("will retry") != std::string::npos; }, seconds(10));
  std::this_thread::sleep_for(seconds(1));
  ASSERT_TRUE(daemon.process().running());
  const std::string log_while_read_only = daemon.process().err_so_far();
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM events WHERE sid = 'while-readonly'"), 0);
  read_only.release();
  // Writable again: what was held is committed without a restart or a stop.
  const bool resumed = wait_until(
      [&] { return query_count(daemon.db_path(), "SELECT count(*) FROM events WHERE sid = 'while-readonly'") == 200; },
      seconds(10));
  const ProcessResult result = daemon.stop();
  measured("database made read-only for about 1.5 s: log:\n" + log_summary(log_while_read_only));
  ASSERT_TRUE(logged) << result.err;
  // Said once when it starts (and once a minute while it lasts), not at
  // every retry.
  const auto errors = [](const std::string& log) {
    std::size_t n = 0;
    for (std::size_t at = log.find("[error]"); at != std::string::npos; at = log.find("[error]", at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_LE(errors(log_while_read_only), 2u) << log_while_read_only;
  EXPECT_NE(result.err.find("writing again"), std::string::npos) << result.err;
  EXPECT_TRUE(resumed) << result.err;
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_LT(slowest, 0.5);
  // Held, then written: nothing lost.
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid = 'while-readonly'"), 200);
  EXPECT_EQ(db.query_text("SELECT status FROM sessions WHERE sid = 'while-readonly'"), "complete");
}

// ------------------------------------------------------ resource exhaustion

// trace2d with a lower fd limit: set in the child by the shell (setrlimit),
// as `ulimit -n` in a service's start script would.
class FdLimitedDaemon {
 public:
  FdLimitedDaemon(const TempDir& dir, int max_fds)
      : m_socket(dir.file("t.sock")), m_db(dir.file("t.db")) {
    ProcessSpec spec;
    spec.argv = {"sh", "-c", "ulimit -n " + std::to_string(max_fds) + " && exec \"$0\" \"$@\"", TRACE2D_BIN,
                 "--config", "", "--socket", m_socket, "--dgram-socket", dir.file("d.sock"), "--db", m_db,
                 "--shutdown-grace-ms", "300",
                 // Its socket is a descriptor of the quarter kept in reserve,
                 // which at a limit of 64 has one to spare: the stream
                 // reader's bound is what this measures.
                 "--no-query"};
    m_process = std::make_unique<Process>(spec);
    const bool ready = wait_until(
        [&] { return m_process->out_so_far().find("GIT_TRACE2_EVENT=") != std::string::npos || !m_process->running(); },
        seconds(20));
    if (!ready || !m_process->running()) {
      throw std::runtime_error("trace2d did not start: " + m_process->err_so_far());
    }
  }
  [[nodiscard]] const std::string& socket_path() const { return m_socket; }
  [[nodiscard]] const std::string& db_path() const { return m_db; }
  [[nodiscard]] Process& process() { return *m_process; }
  ProcessResult stop() {
    m_process->signal(SIGTERM);
    return m_process->wait(seconds(30));
  }

 private:
  std::string m_socket;
  std::string m_db;
  std::unique_ptr<Process> m_process;
};

TEST(Faults, FdLimitOf64WithTwoHundredClientsNoBusyLoopAndRecovers) {
#if defined(__SANITIZE_ADDRESS__)
  // The sanitizers probe memory through a pipe: at the fd limit the probe
  // fails and UBSan reports a false "invalid vptr" (in Boost's error_code).
  GTEST_SKIP() << "the sanitizer runtime needs free fds; run by the dev workflow";
#endif
  constexpr int k_clients = 200;
  constexpr int k_events = 10;
  TempDir dir;
  FdLimitedDaemon daemon(dir, 64);
  const pid_t pid = daemon.process().pid();
  ASSERT_NE(read_file("/proc/" + std::to_string(pid) + "/limits").find("Max open files            64 "),
            std::string::npos);
  // All connect and write half a session, then hold their connections open:
  // more than the fd limit lets trace2d hold. It keeps a quarter of its
  // descriptors in reserve and lets one uid hold all but a quarter of the rest
  // (here 36 of 48),
  // and refuses the rest at once (counted), so that the listen backlog keeps
  // moving for everyone else, instead of leaving them waiting there.
  std::barrier connected(k_clients + 1);
  std::barrier release(k_clients + 1);
  std::atomic<int> refused{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < k_clients; ++c) {
    clients.emplace_back([&, c] {
      const std::string sid = "fd-" + std::to_string(c);
      bool ok = true;
      std::unique_ptr<SocketClient> client;
      try {
        client = std::make_unique<SocketClient>(daemon.socket_path());
      } catch (const std::runtime_error&) {
        ok = false;
      }
      for (int n = 0; ok && n < k_events / 2; ++n) {
        ok = client->send(session_line(sid, n, k_events));
      }
      connected.arrive_and_wait();
      release.arrive_and_wait();
      for (int n = k_events / 2; ok && n < k_events; ++n) {
        ok = client->send(session_line(sid, n, k_events));
      }
      refused += ok ? 0 : 1;
    });
  }
  connected.arrive_and_wait();
  std::this_thread::sleep_for(milliseconds(500));
  const ProcStats at_limit = proc_stats(pid);
  std::this_thread::sleep_for(seconds(2));
  const ProcStats later = proc_stats(pid);
  const double cpu = later.cpu_seconds - at_limit.cpu_seconds;
  release.arrive_and_wait();
  for (auto& t : clients) {
    t.join();
  }
  EXPECT_LT(at_limit.open_fds, 64) << "trace2d ran out of descriptors";
  EXPECT_LT(cpu, 0.4) << "CPU seconds used in 2 s at the bound";
  const std::string log = daemon.process().err_so_far();
  EXPECT_EQ(log.find("accept failed"), std::string::npos) << log;
  // Once clients leave, a new one is accepted and served.
  {
    SocketClient late(daemon.socket_path());
    for (int n = 0; n < k_events; ++n) {
      ASSERT_TRUE(late.send(session_line("fd-late", n, k_events)));
    }
  }
  const ProcessResult result = daemon.stop();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  db::Database db = open_db(daemon.db_path());
  const auto complete = db.query_int("SELECT count(*) FROM sessions WHERE sid LIKE 'fd-%' AND status = 'complete'");
  // Every client was served whole, or refused and counted in a reject row.
  EXPECT_EQ(complete, k_clients - refused.load() + 1);
  EXPECT_GE(refused.load(), k_clients - 36 - 1);
  std::int64_t counted = 0;
  db::Statement rows = db.prepare("SELECT reason FROM rejects WHERE reason LIKE 'refused %'");
  while (rows.step()) {
    counted += std::stoll(std::string(rows.column_text(0).substr(8)));
  }
  EXPECT_EQ(counted, refused.load());
  measured("fd limit 64, 200 clients of one uid: " + std::to_string(at_limit.open_fds) + " fds open at the bound; " +
           std::to_string(cpu) + " CPU s in 2 s at the bound; " + std::to_string(refused.load()) +
           " refused and counted, the others stored whole");
}

TEST(Faults, ThousandSlowConnectionsForAMinuteLoseNothingInBoundedMemory) {
  constexpr int k_connections = 1000;
  // The one long test (60 s); TRACE2D_SLOW_CLIENT_SECONDS shortens it by hand.
  const int duration_s = std::getenv("TRACE2D_SLOW_CLIENT_SECONDS") != nullptr
                             ? std::atoi(std::getenv("TRACE2D_SLOW_CLIENT_SECONDS"))
                             : 60;
  TempDir dir;
  RunningDaemon daemon(dir);
  const pid_t pid = daemon.pid();
  const long rss_idle = proc_stats(pid).rss_kib;
  std::vector<std::unique_ptr<SocketClient>> clients;
  std::vector<int> sent(k_connections, 0);
  for (int c = 0; c < k_connections; ++c) {
    clients.push_back(std::make_unique<SocketClient>(daemon.socket_path()));
    ASSERT_TRUE(clients.back()->send(event_line("slow-" + std::to_string(c), "version", 0)));
    ++sent[static_cast<std::size_t>(c)];
  }
  // Each connection sends one event a second, spread evenly: every 10 ms,
  // ten of them.
  long rss_peak = 0;
  double cpu_start = proc_stats(pid).cpu_seconds;
  const auto start = Clock::now();
  auto next_sample = start;
  std::size_t turn = 0;
  for (auto tick = start; tick < start + seconds(duration_s); tick += milliseconds(10)) {
    std::this_thread::sleep_until(tick);
    for (int i = 0; i < k_connections / 100; ++i, turn = (turn + 1) % k_connections) {
      const std::string sid = "slow-" + std::to_string(turn);
      ASSERT_TRUE(clients[turn]->send(event_line(sid, "data", sent[turn]))) << sid;
      ++sent[turn];
    }
    if (Clock::now() >= next_sample) {
      rss_peak = std::max(rss_peak, proc_stats(pid).rss_kib);
      next_sample += seconds(1);
    }
  }
  const ProcStats during = proc_stats(pid);
  const double cpu = during.cpu_seconds - cpu_start;
  long total = 0;
  for (int c = 0; c < k_connections; ++c) {
    const std::string sid = "slow-" + std::to_string(c);
    ASSERT_TRUE(clients[static_cast<std::size_t>(c)]->send(event_line(sid, "atexit", sent[static_cast<std::size_t>(c)])));
    total += ++sent[static_cast<std::size_t>(c)];
  }
  clients.clear();
  const ProcessResult result = daemon.stop();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid LIKE 'slow-%'"), total);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE sid LIKE 'slow-%' AND status = 'complete'"),
            k_connections);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
  EXPECT_GE(during.open_fds, k_connections);
  // Bounded: a small constant per connection, not per event.
  EXPECT_LT(rss_peak - rss_idle, 128 * 1024 + k_sanitizer_kib) << "KiB";
  measured(std::to_string(k_connections) + " slow connections for " + std::to_string(duration_s) + " s: " +
           std::to_string(total) + " events, all stored; RSS " + std::to_string(rss_idle / 1024) + " MiB idle, peak " +
           std::to_string(rss_peak / 1024) + " MiB (" + std::to_string((rss_peak - rss_idle) / k_connections) +
           " KiB per connection); " + std::to_string(cpu) + " CPU s");
}

TEST(Faults, IdleConnectionsStayOpenCostLittleAndNeverBlockOthers) {
  constexpr int k_idle = 200;
  TempDir dir;
  RunningDaemon daemon(dir);
  const pid_t pid = daemon.pid();
  const ProcStats before = proc_stats(pid);
  std::vector<std::unique_ptr<SocketClient>> idle;
  for (int i = 0; i < k_idle; ++i) {
    idle.push_back(std::make_unique<SocketClient>(daemon.socket_path()));
  }
  // Someone else's git meanwhile: stored at once.
  {
    SocketClient busy(daemon.socket_path());
    for (int n = 0; n < 20; ++n) {
      ASSERT_TRUE(busy.send(session_line("busy", n, 20)));
    }
  }
  EXPECT_TRUE(wait_until(
      [&] { return query_count(daemon.db_path(), "SELECT count(*) FROM sessions WHERE sid = 'busy' AND status = 'complete'") == 1; },
      seconds(5)));
  const ProcStats with_idle = proc_stats(pid);
  std::this_thread::sleep_for(seconds(3));
  const ProcStats later = proc_stats(pid);
  // Still connected: no hang-up, nothing to read.
  int open = 0;
  for (const auto& client : idle) {
    pollfd p{client->fd(), POLLIN | POLLRDHUP, 0};
    open += ::poll(&p, 1, 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(open, k_idle);
  EXPECT_GE(later.open_fds, before.open_fds + k_idle);
  const double cpu = later.cpu_seconds - with_idle.cpu_seconds;
  EXPECT_LT(cpu, 0.2) << "CPU seconds in 3 s with idle connections";
  const long per_connection = (later.rss_kib - before.rss_kib) * 1024 / k_idle;
  EXPECT_LT(per_connection, 64 * 1024 + k_sanitizer_kib * 1024 / k_idle) << "bytes of RSS per idle connection";
  idle.clear();
  const ProcessResult result = daemon.stop();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions"), 1);
  measured(std::to_string(k_idle) + " idle connections: " + std::to_string(per_connection) +
           " bytes of RSS each, " + std::to_string(cpu) + " CPU s in 3 s");
}

TEST(Faults, OneByteAtATimeLinesAssembleAndAnEndlessLineIsCutAtTheLimit) {
  constexpr int k_max_line = 1024;
  TempDir dir;
  RunningDaemon daemon(dir, {"--max-line-bytes", std::to_string(k_max_line)});
  const pid_t pid = daemon.pid();
  const std::string slow_line = event_line("dribble", "version", 0);
  std::thread dribbler([&] {
    SocketClient client(daemon.socket_path());
    // One byte a second for the first bytes, then faster: the same path.
    for (std::size_t i = 0; i < slow_line.size(); ++i) {
      ASSERT_TRUE(client.send(std::string_view(&slow_line[i], 1)));
      std::this_thread::sleep_for(i < 4 ? milliseconds(1000) : milliseconds(2));
    }
  });
  // An endless line, one byte per millisecond: never held whole.
  SocketClient endless(daemon.socket_path());
  const double cpu_before = proc_stats(pid).cpu_seconds;
  constexpr int k_endless_bytes = 3 * k_max_line;
  for (int i = 0; i < k_endless_bytes; ++i) {
    ASSERT_TRUE(endless.send("x"));
    std::this_thread::sleep_for(milliseconds(1));
  }
  dribbler.join();
  // Meanwhile, other clients are served.
  {
    SocketClient other(daemon.socket_path());
    ASSERT_TRUE(other.send(session_line("other", 0, 2)));
    ASSERT_TRUE(other.send(session_line("other", 1, 2)));
  }
  EXPECT_TRUE(wait_until([&] { return query_count(daemon.db_path(), "SELECT count(*) FROM events WHERE sid IN ('other', 'dribble')") == 3; },
                         seconds(5)));
  // Not ended yet: no reject, the connection is still open.
  EXPECT_EQ(query_count(daemon.db_path(), "SELECT count(*) FROM rejects"), 0);
  const double cpu = proc_stats(pid).cpu_seconds - cpu_before;
  // The line ends: a "line too long" reject; the connection goes on.
  ASSERT_TRUE(endless.send("\n"));
  ASSERT_TRUE(endless.send(event_line("after-endless", "version", 0)));
  // A second endless line ended by EOF.
  ASSERT_TRUE(endless.send(std::string(2 * k_max_line, 'y')));
  endless.close();
  const ProcessResult result = daemon.stop();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_text("SELECT coalesce(raw, json) || char(10) FROM events WHERE sid = 'dribble'"), slow_line);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid = 'after-endless'"), 1);
  db::Statement rejects = db.prepare("SELECT reason, size, length(raw) FROM rejects ORDER BY id");
  ASSERT_TRUE(rejects.step());
  EXPECT_EQ(rejects.column_text(0), "line too long: " + std::to_string(k_endless_bytes) + " bytes (limit " +
                                        std::to_string(k_max_line) + ")");
  EXPECT_EQ(rejects.column_int(1), k_endless_bytes);
  ASSERT_TRUE(rejects.step());
  EXPECT_NE(std::string(rejects.column_text(0)).find("line too long"), std::string::npos);
  EXPECT_EQ(rejects.column_int(1), 2 * k_max_line);
  EXPECT_FALSE(rejects.step());
  measured("one byte at a time: " + std::to_string(cpu) + " CPU s for ~" +
           std::to_string(k_endless_bytes / 1000 + 4) + " s of dribbling");
}

}  // namespace
}  // namespace trace2d::test
