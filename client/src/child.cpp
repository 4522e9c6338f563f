#include "client/src/child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "client/src/clock.hpp"

extern char** environ;

namespace trace2d::client::detail {
namespace {

// git's prepare_shell_cmd(): only a command with shell syntax in it goes
// through the shell; extra arguments are passed as "$@".
std::vector<std::string> command_line(std::span<const std::string_view> argv, bool use_shell) {
  std::vector<std::string> out;
  if (use_shell && argv[0].find_first_of("|&;<>()$`\\\"' \t\n*?[#~=%") != std::string_view::npos) {
    out.emplace_back("/bin/sh");
    out.emplace_back("-c");
    out.push_back(argv.size() == 1 ? std::string(argv[0]) : std::string(argv[0]) + " \"$@\"");
  }
  for (const std::string_view arg : argv) {
    out.emplace_back(arg);
  }
  return out;
}

std::string_view name_of(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// The inherited environment with `overrides` replacing same-named entries.
std::vector<std::string> environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool replaced = false;
    for (const auto& o : overrides) {
      replaced = replaced || name_of(o) == name_of(entry);
    }
    if (!replaced) {
      out.emplace_back(entry);
    }
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

// File actions, released however spawning ends.
class FileActions {
 public:
  FileActions() { m_ok = posix_spawn_file_actions_init(&m_actions) == 0; }
  ~FileActions() {
    if (m_ok) {
      posix_spawn_file_actions_destroy(&m_actions);
    }
  }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;

  bool dup_to(int fd, int target) {
    return fd < 0 || posix_spawn_file_actions_adddup2(&m_actions, fd, target) == 0;
  }
  bool chdir(const std::string& dir) {
    return dir.empty() || posix_spawn_file_actions_addchdir_np(&m_actions, dir.c_str()) == 0;
  }
  [[nodiscard]] bool ok() const { return m_ok; }
  posix_spawn_file_actions_t* get() { return &m_actions; }

 private:
  posix_spawn_file_actions_t m_actions{};
  bool m_ok = false;
};

pid_t spawn(const SpawnRequest& request, const std::vector<std::string>& overrides) {
  std::vector<std::string> args = command_line(request.argv, request.spec.use_shell);
  std::vector<std::string> env = environment(overrides);
  std::vector<char*> argv = pointers(args);
  std::vector<char*> envp = pointers(env);
  FileActions actions;
  if (!actions.ok() || !actions.chdir(std::string(request.spec.cd)) ||
      !actions.dup_to(request.stdin_fd, STDIN_FILENO) ||
      !actions.dup_to(request.stdout_fd, STDOUT_FILENO) ||
      !actions.dup_to(request.stderr_fd, STDERR_FILENO)) {
    return -1;
  }
  pid_t pid = -1;
  if (posix_spawnp(&pid, argv[0], actions.get(), nullptr, argv.data(), envp.data()) != 0) {
    return -1;
  }
  return pid;
}

}  // namespace

int child_code(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return WEXITSTATUS(wait_status);
  }
  if (WIFSIGNALED(wait_status)) {
    return WTERMSIG(wait_status) + 128;  // what a shell reports, as git does
  }
  return -1;
}

int exec_program(const char* program, const char* const* argv, Where where) noexcept {
  if (program == nullptr || argv == nullptr) {
    errno = EINVAL;
    return -1;
  }
  int exec_id = -1;
  Session* session = nullptr;
  std::vector<std::string> env;
  std::vector<char*> envp;
  try {
    session = Session::current();
    if (session != nullptr && session->active()) {
      std::vector<std::string_view> args;
      for (const char* const* a = argv; *a != nullptr; ++a) {
        args.emplace_back(*a);
      }
      exec_id = session->exec(program, args, where);
      // Built before the session ends: child_environment() needs it active.
      env = environment(session->child_environment());
      envp = pointers(env);
      (void)session->end_before_exec(where);  // a timeout must not stop the exec
    }
  } catch (...) {
    envp.clear();  // exec with the inherited environment, as without tracing
  }
  // execvp's argv is char* const*, but it never writes through them.
  auto* const args = const_cast<char* const*>(argv);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  if (envp.empty()) {
    ::execvp(program, args);
  } else {
    ::execvpe(program, args, envp.data());
  }
  const int error = errno;
  if (session != nullptr && exec_id >= 0) {
    try {
      session->exec_result(exec_id, -1, where);
    } catch (...) {
      // the event is lost; the caller still gets execvp's error
    }
  }
  errno = error;
  return -1;
}

namespace {

// One descriptor, closed when it goes.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  [[nodiscard]] int get() const { return m_fd; }
  void reset(int fd = -1) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = fd;
  }
  int release() { return std::exchange(m_fd, -1); }

 private:
  int m_fd = -1;
};

// A pipe whose one end the child gets (as its stdin, stdout or stderr) and
// the other this process keeps. Both ends close-on-exec: only the spawned
// child gets its end (dup2 onto 0, 1 or 2 clears the flag there), so that
// no other child holds a pipe open and keeps its reader from seeing EOF.
struct ChildPipe {
  Fd child_end;
  Fd our_end;
  // `to_child`: the child reads (its stdin); else it writes.
  bool open(bool to_child) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      return false;
    }
    child_end.reset(to_child ? fds[0] : fds[1]);
    our_end.reset(to_child ? fds[1] : fds[0]);
    return true;
  }
};

constexpr std::int64_t k_after_kill_us = 1'000'000;

// Reads both descriptors into their strings until both close. Past
// `deadline_us` (0: none) the child is killed and reading goes on until the
// pipes close, at most k_after_kill_us more.
void drain(pid_t pid, Fd& out, Fd& err, CapturedOutput& output, std::int64_t deadline_us) {
  std::int64_t give_up_us = 0;
  char buffer[65536];
  while (out.get() >= 0 || err.get() >= 0) {
    const std::int64_t now = mono_us();
    int wait_ms = -1;
    if (deadline_us > 0 && !output.timed_out) {
      if (now >= deadline_us) {
        ::kill(pid, SIGKILL);
        output.timed_out = true;
        give_up_us = now + k_after_kill_us;
      } else {
        wait_ms = static_cast<int>((deadline_us - now) / 1000 + 1);
      }
    }
    if (output.timed_out) {
      if (now >= give_up_us) {
        return;
      }
      wait_ms = static_cast<int>((give_up_us - now) / 1000 + 1);
    }
    pollfd fds[2] = {{out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}};
    const int ready = ::poll(fds, 2, wait_ms);  // a negative fd is ignored
    if (ready < 0 && errno != EINTR) {
      return;
    }
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) {
        continue;
      }
      Fd& fd = i == 0 ? out : err;
      std::string& into = i == 0 ? output.out : output.err;
      const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
      if (n > 0) {
        into.append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        fd.reset();
      }
    }
  }
}

// waitpid, killing the child at `deadline_us` (0: none) if still running.
int reap(pid_t pid, std::int64_t deadline_us, bool& timed_out) noexcept {
  int status = 0;
  while (true) {
    const bool bounded = deadline_us > 0 && !timed_out;
    const pid_t waited = ::waitpid(pid, &status, bounded ? WNOHANG : 0);
    if (waited == pid) {
      return child_code(status);
    }
    if (waited < 0 && errno != EINTR) {
      return -1;
    }
    if (waited == 0) {
      if (mono_us() >= deadline_us) {
        ::kill(pid, SIGKILL);
        timed_out = true;
      } else {
        ::usleep(2000);
      }
    }
  }
}

}  // namespace

ChildOutcome start_command(const SpawnRequest& request, const PipeRequest& pipes, PipeEnds& ends,
                           Where where) {
  ChildOutcome outcome;
  ends = {};
  if (request.argv.empty()) {
    return outcome;
  }
  Session* session = Session::current();
  std::vector<std::string> overrides;
  if (session != nullptr && session->active()) {
    outcome.child_id = session->child_start(request.argv, request.spec, where);
    overrides = session->child_environment();
  }
  for (const std::string_view entry : request.extra_env) {
    overrides.emplace_back(entry);
  }
  ChildPipe in;
  ChildPipe out;
  ChildPipe err;
  SpawnRequest piped = request;
  const bool pipes_ok = (!pipes.in || in.open(true)) && (!pipes.out || out.open(false)) &&
                        (!pipes.err || err.open(false));
  if (pipes.in) {
    piped.stdin_fd = in.child_end.get();
  }
  if (pipes.out) {
    piped.stdout_fd = out.child_end.get();
  }
  if (pipes.err) {
    piped.stderr_fd = err.child_end.get();
  }
  outcome.pid = pipes_ok ? spawn(piped, overrides) : -1;
  if (outcome.pid > 0) {
    // The child's ends close here: the child alone holds them, so that
    // reading ends when it (and whatever it started) is done with them.
    ends = {in.our_end.release(), out.our_end.release(), err.our_end.release()};
  } else if (session != nullptr && outcome.child_id >= 0) {
    session->child_exit(outcome.child_id, outcome.pid, outcome.code, where);
  }
  return outcome;
}

int finish_command(const ChildOutcome& started, std::int64_t deadline_us, bool& timed_out,
                   Where where) noexcept {
  if (started.pid <= 0) {
    return -1;  // never started: start_command reported it
  }
  const int code = reap(started.pid, deadline_us, timed_out);
  try {
    Session* session = Session::current();
    if (session != nullptr && started.child_id >= 0) {
      session->child_exit(started.child_id, started.pid, code, where);
    }
  } catch (...) {
    // The event is lost to an allocation; the child was reaped and its code stands.
  }
  return code;
}

ChildOutcome run_child_captured(const SpawnRequest& request, const CaptureRequest& capture,
                                CapturedOutput& output, Where where) {
  PipeEnds ends;
  ChildOutcome outcome = start_command(request, {false, capture.out, capture.err}, ends, where);
  Fd out(ends.out);
  Fd err(ends.err);
  if (outcome.pid > 0) {
    const std::int64_t deadline_us =
        capture.timeout_ms > 0 ? mono_us() + capture.timeout_ms * 1000 : 0;
    drain(outcome.pid, out, err, output, deadline_us);
    outcome.code = finish_command(outcome, deadline_us, output.timed_out, where);
  }
  return outcome;
}

ChildOutcome run_child(const SpawnRequest& request, Where where) {
  PipeEnds ends;
  ChildOutcome outcome = start_command(request, {}, ends, where);
  bool timed_out = false;
  outcome.code = finish_command(outcome, 0, timed_out, where);
  return outcome;
}

}  // namespace trace2d::client::detail
