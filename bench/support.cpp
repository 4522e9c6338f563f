#include "bench/support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "proto/timestamp.hpp"

extern char** environ;

namespace trace2d::bench {
namespace {

constexpr std::string_view k_sid_key = "\"sid\":\"";
constexpr std::string_view k_sid_placeholder = "@SID@";

void load_file(const std::filesystem::path& path, std::size_t min_events, std::vector<ProcessTrace>& out) {
  std::ifstream in(path, std::ios::binary);
  std::map<std::string, ProcessTrace> by_sid;
  std::vector<std::string> order;
  std::string line;
  while (std::getline(in, line)) {
    const auto key = line.find(k_sid_key);
    if (key == std::string::npos) {
      throw std::runtime_error("no sid in a line of " + path.string());
    }
    const auto begin = key + k_sid_key.size();
    const auto end = line.find('"', begin);
    const std::string sid = line.substr(begin, end - begin);
    if (by_sid.count(sid) == 0) {
      order.push_back(sid);
    }
    by_sid[sid].lines.push_back(line.substr(0, begin) + std::string(k_sid_placeholder) + line.substr(end) +
                                "\n");
  }
  for (const auto& sid : order) {
    if (by_sid[sid].lines.size() >= min_events) {
      out.push_back(std::move(by_sid[sid]));
    }
  }
}

}  // namespace

void Fd::reset(int fd) {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
  m_fd = fd;
}

std::vector<ProcessTrace> load_traces(const std::string& path, std::size_t min_events) {
  std::vector<ProcessTrace> traces;
  if (std::filesystem::is_directory(path)) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      if (entry.path().extension() == ".jsonl") {
        files.push_back(entry.path());
      }
    }
    // Sorted, so every program deals the same traces in the same order.
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      load_file(file, min_events, traces);
    }
  } else {
    load_file(path, min_events, traces);
  }
  if (traces.empty()) {
    throw std::runtime_error("no traces (of at least " + std::to_string(min_events) + " events) in " + path);
  }
  return traces;
}

std::unordered_map<std::string, std::int64_t> Payload::events_by_sid() const {
  std::unordered_map<std::string, std::int64_t> counts;
  for (const auto& connections : clients) {
    for (const Connection& connection : connections) {
      counts[connection.sid] += static_cast<std::int64_t>(connection.lines.size());
    }
  }
  return counts;
}

void PayloadOptions::add_to(CLI::App& cli) {
  cli.add_option("--shape", shape,
                 "short: 64 writers, a connection per process; long: 16 connections, each one "
                 "~4,500-event process; dgram: 20 datagram writers; dir: files renamed into a "
                 "watched directory")
      ->check(CLI::IsMember({"short", "long", "dgram", "dir"}))
      ->capture_default_str();
  cli.add_option("--traces", traces, "Directory of captured .jsonl traces (short, dgram, dir)")
      ->capture_default_str();
  cli.add_option("--long-trace", long_trace, "The long process's trace (long)")->capture_default_str();
  cli.add_option("--clients", clients, "Concurrent writers (default: 64, 16, 20, 1 by shape)");
  cli.add_option("--events", events,
                 "Events to send in all, about (default: 500,000; long 1,000,000; dgram 200,000)");
  cli.add_option("--files", files, "dir: trace files (processes) to send (default 10,000)");
}

int PayloadOptions::client_count() const {
  if (clients > 0) {
    return clients;
  }
  if (shape == "long") {
    return 16;
  }
  if (shape == "dgram") {
    return 20;
  }
  return shape == "dir" ? 1 : 64;
}

Payload make_payload(const PayloadOptions& options) {
  const bool long_shape = options.shape == "long";
  // A long process is the one big process of the long trace, not its
  // 7-event child.
  const auto traces = long_shape ? load_traces(options.long_trace, 1000) : load_traces(options.traces);
  std::int64_t target_events = options.events;
  std::int64_t target_sessions = 0;
  if (options.shape == "dir") {
    target_sessions = options.files > 0 ? options.files : 10000;
    target_events = 0;
  } else if (target_events <= 0) {
    target_events = long_shape ? 1000000 : options.shape == "dgram" ? 200000 : 500000;
  }
  const int clients = options.client_count();
  Payload payload;
  payload.clients.resize(static_cast<std::size_t>(clients));
  std::size_t next_trace = 0;
  for (int c = 0; target_sessions > 0 ? payload.sessions < target_sessions : payload.events < target_events;
       c = (c + 1) % clients) {
    const ProcessTrace& trace = traces[next_trace++ % traces.size()];
    char sid[64];
    std::snprintf(sid, sizeof sid, "20261121T100000.000000Z-H%.16s%03d-P%08llx", options.sid_host.c_str(), c,
                  static_cast<unsigned long long>(payload.sessions));
    Connection connection;
    connection.sid = sid;
    connection.lines.reserve(trace.lines.size());
    for (const std::string& line : trace.lines) {
      const auto at = line.find(k_sid_placeholder);
      std::string replaced = line.substr(0, at);
      replaced.append(connection.sid).append(line, at + k_sid_placeholder.size());
      payload.bytes += replaced.size();
      connection.lines.push_back(std::move(replaced));
    }
    payload.events += static_cast<std::int64_t>(trace.lines.size());
    ++payload.sessions;
    payload.clients[static_cast<std::size_t>(c)].push_back(std::move(connection));
  }
  return payload;
}

bool send_all(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::send(fd, data + done, size - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

Fd connect_stream(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), std::min(path.size() + 1, sizeof addr.sun_path - 1));
  for (int attempt = 0; attempt < 5000; ++attempt) {
    Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      return fd;
    }
    if (errno != EAGAIN && errno != ECONNREFUSED && errno != ENOENT && errno != EINTR) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  throw std::runtime_error("connect " + path + ": " + std::strerror(errno));
}

Child::Child(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path,
             const std::map<std::string, std::string>& env) {
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (auto& a : args) {
    cargs.push_back(a.data());
  }
  cargs.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    if (env.count(entry.substr(0, entry.find('='))) == 0) {
      env_strings.push_back(entry);
    }
  }
  for (const auto& [key, value] : env) {
    env_strings.push_back(key + "=" + value);
  }
  std::vector<char*> cenv;
  for (auto& e : env_strings) {
    cenv.push_back(e.data());
  }
  cenv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (!out_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  if (!err_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  const int rc = posix_spawnp(&m_pid, cargs[0], &actions, nullptr, cargs.data(), cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    m_pid = -1;
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
}

Child::~Child() {
  if (m_pid > 0) {
    ::kill(m_pid, SIGKILL);
    wait();
  }
}

Child::Child(Child&& other) noexcept : m_pid(other.m_pid) { other.m_pid = -1; }

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      wait();
    }
    m_pid = other.m_pid;
    other.m_pid = -1;
  }
  return *this;
}

int Child::terminate() {
  if (m_pid <= 0) {
    return -1;
  }
  ::kill(m_pid, SIGTERM);
  return wait();
}

int Child::wait() {
  if (m_pid <= 0) {
    return -1;
  }
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
  m_pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::optional<int> Child::try_wait() {
  if (m_pid <= 0) {
    return -1;
  }
  int status = 0;
  if (::waitpid(m_pid, &status, WNOHANG) != m_pid) {
    return std::nullopt;
  }
  m_pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string stream_socket_in(const std::string& work_dir) { return work_dir + "/t2d.sock"; }
std::string dgram_socket_in(const std::string& work_dir) { return work_dir + "/t2d-dgram.sock"; }
std::string database_in(const std::string& work_dir) { return work_dir + "/t2d.db"; }

Child start_trace2d(const std::string& binary, const std::string& work_dir,
                    const std::vector<std::string>& extra_args, const std::vector<std::string>& wrapper) {
  std::vector<std::string> args = wrapper;
  args.insert(args.end(), {binary, "--config", "", "--socket", stream_socket_in(work_dir), "--dgram-socket",
                           dgram_socket_in(work_dir), "--db", database_in(work_dir), "--log-level", "info"});
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  const std::string log = work_dir + "/trace2d.log";
  Child child(args, "/dev/null", log);
  // "listening" is logged once every source (sockets, watched directories) is up.
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(" listening: ") != std::string::npos) {
      return child;
    }
    if (child.try_wait()) {
      throw std::runtime_error("trace2d exited at start-up: " + text.str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  throw std::runtime_error("trace2d did not start listening within 60 s");
}

std::int64_t proc_status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stoll(line.substr(field.size() + 1));
    }
  }
  return -1;
}

std::map<std::string, double> thread_cpu_seconds(pid_t pid) {
  std::map<std::string, double> seconds;
  const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    // "tid (name) state ppid ...": the name may hold spaces; fields count
    // from after its closing parenthesis, utime and stime being the 14th
    // and 15th of the line.
    const auto open = stat.find('(');
    const auto close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      continue;
    }
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int index = 3; index <= 15 && fields >> field; ++index) {
      if (index >= 14) {
        ticks += std::stod(field);
      }
    }
    seconds[stat.substr(open + 1, close - open - 1)] += ticks / ticks_per_second;
  }
  return seconds;
}

WorkDir::WorkDir(const std::string& given, const std::string& parent) {
  if (!given.empty()) {
    std::filesystem::create_directories(given);
    m_path = given;
    return;
  }
  std::string pattern = parent + "/t2d-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  }
  m_path = pattern;
  m_owned = true;
}

WorkDir::~WorkDir() {
  if (m_owned) {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
}

void raise_fd_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

namespace {

constexpr std::int64_t k_copy_shift_us = 60'000'000;  // each copy a minute later

std::vector<std::string> load_lines(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> lines;
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    for (std::string line; std::getline(in, line);) {
      lines.push_back(line);
    }
  }
  if (lines.empty()) {
    throw std::runtime_error("no traces in " + dir);
  }
  return lines;
}

// The host part of git's SIDs ("-H0a7c9cdf-"): rewriting it makes every SID
// of a copy new while keeping the SIDs' shape (and the P<hex> pids).
std::string host_token(const std::string& line) {
  const auto at = line.find("-H");
  if (at == std::string::npos || at + 11 > line.size() || line[at + 10] != '-') {
    throw std::runtime_error("unexpected SID in: " + line.substr(0, 200));
  }
  return line.substr(at, 11);
}

std::string rewrite(const std::string& line, const std::string& host, int copy) {
  char token[16];
  std::snprintf(token, sizeof token, "-H%08x-", static_cast<unsigned>(copy));
  std::string out;
  out.reserve(line.size());
  std::size_t from = 0;
  for (auto at = line.find(host); at != std::string::npos; at = line.find(host, from)) {
    out.append(line, from, at - from);
    out += token;
    from = at + host.size();
  }
  out.append(line, from);
  const std::string key = "\"time\":\"";
  if (const auto at = out.find(key); at != std::string::npos) {
    const auto begin = at + key.size();
    const auto end = out.find('"', begin);
    if (const auto us = trace2d::proto::parse_utc_timestamp(out.substr(begin, end - begin))) {
      out.replace(begin, end - begin, trace2d::proto::format_utc_timestamp(*us + copy * k_copy_shift_us));
    }
  }
  return out;
}

}  // namespace

TraceCopies write_trace_copies(const std::string& traces, const std::string& out_dir, std::int64_t events) {
  const std::vector<std::string> corpus = load_lines(traces);
  const std::string host = host_token(corpus.front());
  const auto per_copy = static_cast<long>(corpus.size());
  const int copies = static_cast<int>((events + per_copy - 1) / per_copy);
  std::filesystem::create_directories(out_dir);
  for (int copy = 0; copy < copies; ++copy) {
    char name[32];
    std::snprintf(name, sizeof name, "copy-%05d.jsonl", copy);
    std::ofstream out(std::filesystem::path(out_dir) / name, std::ios::binary);
    for (const std::string& line : corpus) {
      out << rewrite(line, host, copy) << '\n';
    }
  }
  return {copies, per_copy};
}

}  // namespace trace2d::bench
