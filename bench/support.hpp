#pragma once
// What the benchmark programs share: real git traces turned into a payload
// (one connection per replayed process, each with a unique SID), child
// processes (trace2d, drain_reader, git), sockets, and /proc readings.
//
// The payload is deterministic for given options, so ingest_bench (which
// sends it) and storage_limit (which stores it without sockets) work on
// exactly the same bytes.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace CLI {
class App;
}

namespace trace2d::bench {

using Clock = std::chrono::steady_clock;

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : m_fd(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : m_fd(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset(other.release());
    }
    return *this;
  }
  [[nodiscard]] int get() const { return m_fd; }
  [[nodiscard]] bool valid() const { return m_fd >= 0; }
  int release() {
    const int fd = m_fd;
    m_fd = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int m_fd = -1;
};

// One git process's trace: its lines (each ending in '\n') with the SID
// replaced by "@SID@".
struct ProcessTrace {
  std::vector<std::string> lines;
};

// Every process in a .jsonl file, or in every .jsonl file of a directory
// (sorted by name), keeping those with at least `min_events` lines.
[[nodiscard]] std::vector<ProcessTrace> load_traces(const std::string& path, std::size_t min_events = 0);

// One replayed process: what one git process sends over its own connection.
struct Connection {
  std::string sid;
  std::vector<std::string> lines;  // each ends in '\n'
};

struct Payload {
  std::vector<std::vector<Connection>> clients;  // each client's connections, in order
  std::int64_t events = 0;
  std::int64_t sessions = 0;
  std::uint64_t bytes = 0;  // NDJSON bytes, newlines included
  [[nodiscard]] std::unordered_map<std::string, std::int64_t> events_by_sid() const;
};

// Which payload a benchmark sends; parsed the same way by every program.
struct PayloadOptions {
  std::string shape = "short";  // short | long | dgram | dir
  std::string traces = "tests/data/traces";
  std::string long_trace = "bench/data/rebase_long.jsonl";
  int clients = 0;          // 0: the shape's default
  std::int64_t events = 0;  // about this many events (0: the shape's default)
  std::int64_t files = 0;   // dir: this many processes (files) instead
  // The host part of the SIDs ("H<host><client>"): payloads sent into one
  // database need different ones, or their sessions would be taken for the
  // same processes.
  std::string sid_host = "bench";

  void add_to(CLI::App& cli);
  [[nodiscard]] int client_count() const;
};

// Deals the traces round-robin to the clients, one connection (and a fresh
// SID) per process, until the shape's size is reached.
[[nodiscard]] Payload make_payload(const PayloadOptions& options);

// Writes `bytes` whole with blocking send(); false on error.
bool send_all(int fd, const char* data, std::size_t size);

// A connected AF_UNIX stream socket (retries while the listener is not up).
[[nodiscard]] Fd connect_stream(const std::string& path);

// A child process; SIGKILLed and reaped on destruction if still running.
class Child {
 public:
  Child() = default;
  // stdout/stderr go to the given files ("" inherits); `env` is added to
  // this process's environment.
  Child(const std::vector<std::string>& argv, const std::string& out_path = "",
        const std::string& err_path = "", const std::map<std::string, std::string>& env = {});
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;

  [[nodiscard]] pid_t pid() const { return m_pid; }
  // SIGTERM, then waits; the exit code, or -1 if it did not exit normally.
  int terminate();
  // Waits for it to exit; the exit code, or -1.
  int wait();
  // The exit code (or -1) if it has exited, nullopt while it runs.
  std::optional<int> try_wait();

 private:
  pid_t m_pid = -1;
};

// Starts trace2d on sockets (and databases) inside `work_dir`, logging to
// work_dir/trace2d.log, and returns once it logs that it is listening.
// `wrapper` runs in front of it (`chrt --batch 0`).
[[nodiscard]] Child start_trace2d(const std::string& binary, const std::string& work_dir,
                                  const std::vector<std::string>& extra_args,
                                  const std::vector<std::string>& wrapper = {});
[[nodiscard]] std::string stream_socket_in(const std::string& work_dir);
[[nodiscard]] std::string dgram_socket_in(const std::string& work_dir);
[[nodiscard]] std::string database_in(const std::string& work_dir);

// A field of /proc/<pid>/status in KiB (VmHWM, VmRSS), or -1.
[[nodiscard]] std::int64_t proc_status_kib(pid_t pid, const std::string& field);
// CPU seconds (user + system) of each thread of `pid` so far, summed by
// thread name ("trace2d-parse"): /proc/<pid>/task/*/stat.
[[nodiscard]] std::map<std::string, double> thread_cpu_seconds(pid_t pid);

// `given`, or a fresh directory under `parent` removed on destruction.
class WorkDir {
 public:
  explicit WorkDir(const std::string& given = "", const std::string& parent = "/tmp");
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  [[nodiscard]] const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  bool m_owned = false;
};

// Raises this process's open-file limit to its hard limit (children inherit it).
void raise_fd_limit();

[[nodiscard]] double seconds_between(Clock::time_point from, Clock::time_point to);

// Copies of the real git traces in `traces` (a directory of .jsonl files)
// written to `out_dir` as files `trace2d import` reads, about `events`
// events in all: each copy with its own SIDs (git's host token rewritten)
// and its times a minute after the copy before.
struct TraceCopies {
  int copies = 0;
  long per_copy = 0;  // events in each
};
[[nodiscard]] TraceCopies write_trace_copies(const std::string& traces, const std::string& out_dir,
                                             std::int64_t events);

}  // namespace trace2d::bench
