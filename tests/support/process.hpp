#pragma once
// Runs real programs (trace2d, trace2ctl, git) from tests.

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trace2d::test {

// A user to run a child as (tests of what one local user can do to another).
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
};
// The unprivileged `nobody` user (getpwnam), for a second real uid in tests.
RunAs nobody();

struct ProcessSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // set on top of the test's environment
  std::vector<std::string> unset_env;
  std::string cwd;
  std::string stdin_data;
  // Give the child a pipe as stdin, held open until close_stdin() (for
  // programs that must block reading it).
  bool stdin_pipe = false;
  // Drop to this uid/gid (and no supplementary groups) before exec; needs root.
  std::optional<RunAs> run_as;
  // RLIMIT_NOFILE (soft and hard) for the child, as systemd would set it.
  std::optional<rlim_t> max_open_files;
};

struct ProcessResult {
  int exit_code = -1;       // when it exited
  int term_signal = 0;      // when a signal ended it
  bool timed_out = false;   // killed by wait()'s timeout
  std::string out;
  std::string err;
  double seconds = 0;
};

class Process {
 public:
  explicit Process(const ProcessSpec& spec);
  ~Process();  // kills the process if it still runs
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  [[nodiscard]] pid_t pid() const { return m_pid; }
  void close_stdin();
  void signal(int signo) const;
  // Waits for exit; SIGKILLs it after `timeout`.
  ProcessResult wait(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  [[nodiscard]] bool running();
  // What it has written so far.
  [[nodiscard]] std::string out_so_far() const;
  [[nodiscard]] std::string err_so_far() const;

 private:
  pid_t m_pid = -1;
  std::string m_out_path;
  std::string m_err_path;
  std::chrono::steady_clock::time_point m_started;
  std::optional<int> m_status;
  int m_stdin_fd = -1;
};

ProcessResult run_process(const ProcessSpec& spec,
                          std::chrono::milliseconds timeout = std::chrono::seconds(60));

// Polls `condition` every 10 ms until true or `timeout`; returns its last value.
template <typename Condition>
bool wait_until(Condition condition, std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace trace2d::test

#include <thread>

template <typename Condition>
bool trace2d::test::wait_until(Condition condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return condition();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}
