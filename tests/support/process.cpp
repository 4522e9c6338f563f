#include "tests/support/process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "tests/support/temp_dir.hpp"

extern char** environ;

namespace trace2d::test {
namespace {

std::string make_temp_file(const char* tag) {
  std::string pattern = std::string("/tmp/t2d-") + tag + "-XXXXXX";
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    throw std::runtime_error("mkstemp failed");
  }
  ::close(fd);
  return pattern;
}

}  // namespace

RunAs nobody() {
  const passwd* user = ::getpwnam("nobody");
  if (user == nullptr) {
    throw std::runtime_error("no user 'nobody' on this machine");
  }
  return RunAs{user->pw_uid, user->pw_gid};
}

Process::Process(const ProcessSpec& spec) {
  if (spec.argv.empty()) {
    throw std::invalid_argument("ProcessSpec without argv");
  }
  m_out_path = make_temp_file("out");
  m_err_path = make_temp_file("err");
  const std::string in_path = make_temp_file("in");
  write_file(in_path, spec.stdin_data);

  // Build everything the child needs before fork: no allocation after it.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool drop = spec.env.count(name) > 0;
    for (const auto& unset : spec.unset_env) {
      drop = drop || unset == name;
    }
    if (!drop) {
      env_strings.push_back(entry);
    }
  }
  for (const auto& [name, value] : spec.env) {
    env_strings.push_back(name + "=" + value);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) {
    envp.push_back(s.data());
  }
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);

  int pipe_fds[2] = {-1, -1};
  if (spec.stdin_pipe && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  // Opened before fork: the child must not race the parent's cleanup.
  const int in = spec.stdin_pipe ? pipe_fds[0] : ::open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = ::open(m_out_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  const int err = ::open(m_err_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (in < 0 || out < 0 || err < 0) {
    throw std::runtime_error("cannot open the child's stdio files");
  }
  m_started = std::chrono::steady_clock::now();
  m_pid = ::fork();
  if (m_pid < 0) {
    throw std::runtime_error("fork failed");
  }
  if (m_pid == 0) {
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) {
      ::_exit(126);
    }
    if (spec.max_open_files) {
      const rlimit limit{*spec.max_open_files, *spec.max_open_files};
      if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
        ::_exit(125);
      }
    }
    if (spec.run_as && (::setgroups(0, nullptr) != 0 || ::setgid(spec.run_as->gid) != 0 ||
                        ::setuid(spec.run_as->uid) != 0)) {
      ::_exit(125);
    }
    if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) {
      ::_exit(126);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::execvpe(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::unlink(in_path.c_str());
  ::close(in);
  ::close(out);
  ::close(err);
  if (spec.stdin_pipe) {
    m_stdin_fd = pipe_fds[1];
  }
}

void Process::close_stdin() {
  if (m_stdin_fd >= 0) {
    ::close(m_stdin_fd);
    m_stdin_fd = -1;
  }
}

Process::~Process() {
  close_stdin();
  if (!m_status && m_pid > 0) {
    ::kill(m_pid, SIGKILL);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
  }
  ::unlink(m_out_path.c_str());
  ::unlink(m_err_path.c_str());
}

void Process::signal(int signo) const {
  if (!m_status && m_pid > 0) {
    ::kill(m_pid, signo);
  }
}

bool Process::running() {
  if (m_status) {
    return false;
  }
  int status = 0;
  if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
    m_status = status;
    return false;
  }
  return true;
}

ProcessResult Process::wait(std::chrono::milliseconds timeout) {
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(m_pid, SIGKILL);
      int status = 0;
      ::waitpid(m_pid, &status, 0);
      m_status = status;
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
  if (WIFEXITED(*m_status)) {
    result.exit_code = WEXITSTATUS(*m_status);
  } else if (WIFSIGNALED(*m_status)) {
    result.term_signal = WTERMSIG(*m_status);
  }
  result.out = out_so_far();
  result.err = err_so_far();
  return result;
}

std::string Process::out_so_far() const { return read_file(m_out_path); }
std::string Process::err_so_far() const { return read_file(m_err_path); }

ProcessResult run_process(const ProcessSpec& spec, std::chrono::milliseconds timeout) {
  Process process(spec);
  return process.wait(timeout);
}

}  // namespace trace2d::test
