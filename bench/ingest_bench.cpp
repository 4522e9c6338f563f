// Ingest benchmark: replays real git traces into a real trace2d from many
// concurrent stream clients as fast as they can write, and measures events
// committed to SQLite per second, trace2d's peak RSS, and loss (stored events
// must equal sent events, with no rejects).
//
//   ingest_bench --trace2d build/release/bin/trace2d --traces tests/data/traces
//                [--clients 64] [--events 1000000] [--shape short|long]
//
// shape short: one connection per process, as git does (each replayed
// process is a fresh connection). shape long: each client sends one long
// stream (its processes back to back on one connection).

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "daemon/store/sqlite.hpp"

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;

// One git process's trace: its lines, with the SID replaced by a placeholder.
struct ProcessTrace {
  std::vector<std::string> lines;  // each contains "@SID@" where the SID was
};

std::vector<ProcessTrace> load_traces(const std::string& dir) {
  std::vector<ProcessTrace> traces;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::map<std::string, ProcessTrace> by_sid;
    std::vector<std::string> order;
    std::string line;
    while (std::getline(in, line)) {
      const std::string key = "\"sid\":\"";
      const auto begin = line.find(key) + key.size();
      const auto end = line.find('"', begin);
      const std::string sid = line.substr(begin, end - begin);
      if (by_sid.count(sid) == 0) {
        order.push_back(sid);
      }
      by_sid[sid].lines.push_back(line.substr(0, begin) + "@SID@" + line.substr(end) + "\n");
    }
    for (const auto& sid : order) {
      traces.push_back(by_sid[sid]);
    }
  }
  if (traces.empty()) {
    throw std::runtime_error("no traces in " + dir);
  }
  return traces;
}

int connect_to(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      return fd;
    }
    if (errno != EAGAIN && errno != ECONNREFUSED) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
}

bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) {
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

long peak_rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stol(line.substr(6));
    }
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace2d = "build/release/bin/trace2d";
  std::string traces_dir = "tests/data/traces";
  std::string shape = "short";
  std::string work_dir;
  int clients = 64;
  long target_events = 1000000;
  std::vector<std::string> daemon_args;
  CLI::App cli{"Replays real git traces into trace2d and measures committed events/s."};
  cli.add_option("--trace2d", trace2d, "trace2d binary")->capture_default_str();
  cli.add_option("--traces", traces_dir, "Directory of captured .jsonl traces")->capture_default_str();
  cli.add_option("--clients", clients, "Concurrent writers")->capture_default_str();
  cli.add_option("--events", target_events, "Events to send in total (about)")->capture_default_str();
  cli.add_option("--shape", shape, "short: a connection per process; long: one per client")
      ->check(CLI::IsMember({"short", "long"}))
      ->capture_default_str();
  cli.add_option("--work-dir", work_dir, "Where the socket and database go (default: a temp dir)");
  cli.add_option("--daemon-arg", daemon_args, "Extra trace2d flag (repeatable)");
  CLI11_PARSE(cli, argc, argv);

  const auto traces = load_traces(traces_dir);
  if (work_dir.empty()) {
    char pattern[] = "/tmp/t2d-bench-XXXXXX";
    work_dir = ::mkdtemp(pattern);
  }
  const std::string socket = work_dir + "/bench.sock";
  const std::string db_path = work_dir + "/bench.db";
  std::filesystem::remove(db_path);

  // Every client's payload, built before the clock starts: a list of
  // connections, each a list of lines (one write() per line, as git does).
  std::vector<std::vector<std::vector<std::string>>> payloads(static_cast<std::size_t>(clients));
  long total_events = 0;
  long total_sessions = 0;
  std::size_t next_trace = 0;
  for (int c = 0; total_events < target_events; c = (c + 1) % clients) {
    auto& connections = payloads[static_cast<std::size_t>(c)];
    if (shape == "short" || connections.empty()) {
      connections.emplace_back();
    }
    const ProcessTrace& trace = traces[next_trace++ % traces.size()];
    const std::string sid = "20261121T100000.000000Z-Hbench000-P" + std::to_string(c) + "-" +
                            std::to_string(total_sessions);
    for (const std::string& line : trace.lines) {
      const auto at = line.find("@SID@");
      connections.back().push_back(line.substr(0, at) + sid + line.substr(at + 5));
    }
    total_events += static_cast<long>(trace.lines.size());
    ++total_sessions;
  }

  std::vector<std::string> args = {trace2d, "--config", "", "--socket", socket, "--dgram-socket", work_dir + "/bench-dgram.sock",
                                   "--db", db_path, "--log-level", "info"};
  args.insert(args.end(), daemon_args.begin(), daemon_args.end());
  std::vector<char*> cargs;
  for (auto& a : args) {
    cargs.push_back(a.data());
  }
  cargs.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t daemon = 0;
  if (posix_spawn(&daemon, trace2d.c_str(), &actions, nullptr, cargs.data(), environ) != 0) {
    std::fprintf(stderr, "cannot start %s\n", trace2d.c_str());
    return 1;
  }
  for (int i = 0; i < 2000 && !std::filesystem::exists(socket); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  std::atomic<long> failed_writes{0};
  const auto start = clock_type::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (const auto& connection : payloads[static_cast<std::size_t>(c)]) {
        const int fd = connect_to(socket);
        for (const std::string& line : connection) {
          if (!write_all(fd, line)) {
            failed_writes.fetch_add(1);
          }
        }
        ::close(fd);
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  const auto sent = clock_type::now();

  // Committed = visible to a reader: poll the session counters.
  long committed = 0;
  {
    trace2d::store::Database db(db_path, trace2d::store::OpenMode::read_only);
    db.set_busy_timeout(1000);
    const auto deadline = clock_type::now() + std::chrono::seconds(300);
    while (committed < total_events && clock_type::now() < deadline) {
      committed = db.query_int("SELECT coalesce(sum(event_count), 0) FROM sessions").value_or(0);
      if (committed < total_events) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  }
  const auto done = clock_type::now();
  const long rss = peak_rss_kib(daemon);
  ::kill(daemon, SIGTERM);
  int status = 0;
  ::waitpid(daemon, &status, 0);

  trace2d::store::Database db(db_path, trace2d::store::OpenMode::read_only);
  const long stored = db.query_int("SELECT count(*) FROM event_store").value_or(-1);
  const long rejects = db.query_int("SELECT count(*) FROM rejects").value_or(-1);
  const long sessions = db.query_int("SELECT count(*) FROM sessions").value_or(-1);
  const double send_s = std::chrono::duration<double>(sent - start).count();
  const double commit_s = std::chrono::duration<double>(done - start).count();
  const bool lossless = stored == total_events && rejects == 0 && sessions == total_sessions &&
                        failed_writes.load() == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::printf(
      "shape=%s clients=%d sessions=%ld events=%ld sent_in=%.3fs committed_in=%.3fs "
      "committed_events_per_s=%.0f peak_rss_mib=%.1f stored=%ld rejects=%ld loss=%s\n",
      shape.c_str(), clients, total_sessions, total_events, send_s, commit_s,
      static_cast<double>(total_events) / commit_s, static_cast<double>(rss) / 1024.0, stored, rejects,
      lossless ? "none" : "YES");
  return lossless ? 0 : 1;
}
