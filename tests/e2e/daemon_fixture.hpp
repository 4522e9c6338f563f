#pragma once
// A real trace2d process for end-to-end tests, in its own temp directory,
// plus helpers to run the real git against it and to read what it stored.

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/sqlite.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {

class RunningDaemon {
 public:
  // Starts trace2d on <dir>/t.sock (stream), <dir>/d.sock (dgram) and
  // <dir>/t.db, with no configuration file unless `extra_args` passes
  // --config, and waits until it listens. `max_open_files`: its
  // RLIMIT_NOFILE, as systemd would set it.
  explicit RunningDaemon(const TempDir& dir, std::vector<std::string> extra_args = {},
                         std::optional<rlim_t> max_open_files = std::nullopt);
  ~RunningDaemon();

  [[nodiscard]] const std::string& socket_path() const { return m_socket; }
  [[nodiscard]] const std::string& db_path() const { return m_db; }
  [[nodiscard]] const std::string& dgram_socket_path() const { return m_dgram_socket; }
  // The value for GIT_TRACE2_EVENT, as trace2d printed it.
  [[nodiscard]] std::string git_target() const { return "af_unix:stream:" + m_socket; }
  [[nodiscard]] pid_t pid() const { return m_process->pid(); }
  [[nodiscard]] Process& process() { return *m_process; }

  // SIGTERM and wait; the result holds its exit code and logs.
  ProcessResult stop(std::chrono::milliseconds timeout = std::chrono::seconds(30));

 private:
  std::string m_socket;
  std::string m_dgram_socket;
  std::string m_db;
  std::unique_ptr<Process> m_process;
  std::optional<ProcessResult> m_result;
};

// The port trace2d says it serves /metrics on (it was given port 0); 0
// when it never said.
int metrics_port(RunningDaemon& daemon);

// A git repository with a few files and commits under `dir`/`name`.
std::string make_repo(const TempDir& dir, const std::string& name, int files = 20);
// Makes repeated commands in `path` behave identically (no racy-git index rewrites).
void settle_repo(const std::string& path);
// `dir`/clone, one commit behind its upstream `dir`/upstream, so that a
// fetch transfers objects (and runs upload-pack and pack-objects).
std::string clone_behind(const TempDir& dir);

// trace2ctl --db `db` with `args`.
ProcessResult ctl(const std::string& db, std::vector<std::string> args);
// Waits (through trace2ctl) until every session in `db` has finished and
// there are at least `count`; false when that did not come.
bool wait_for_sessions(const std::string& db, int count);

// git with the given environment, tracing variables and user config cleared.
ProcessSpec git_spec(const std::string& cwd, const std::vector<std::string>& args,
                     std::map<std::string, std::string> env = {});
ProcessResult run_git(const std::string& cwd, const std::vector<std::string>& args,
                      std::map<std::string, std::string> env = {});

// Event counts per SID as git wrote them into a trace directory: the
// reference a socket capture is compared with.
std::map<std::string, long> count_events_in_trace_dir(const std::string& dir);

// Event counts per SID in a trace2d database (from the `events` view).
std::map<std::string, long> count_events_in_db(const std::string& db_path);

// The SIDs' "shapes": each SID with its own timestamps/pids replaced by its
// position in the tree, so two runs of the same command compare equal.
std::map<std::string, long> by_shape(const std::map<std::string, long>& counts);

db::Database open_db(const std::string& path);
// The one integer `sql` gives on the database at `db_path` (-1 when none).
std::int64_t query_count(const std::string& db_path, const std::string& sql);

// RLIMIT_NOFILE as systemd gives a service by default: the limit the
// hostile suites run trace2d at.
inline constexpr rlim_t k_service_fd_limit = 1024;

// A field of /proc/<pid>/status in KiB (VmRSS, VmHWM, ...); -1 when absent.
long status_kib(pid_t pid, const std::string& field);
// Descriptors a process holds open.
long open_fds(pid_t pid);

}  // namespace trace2d::test
