#include "ctl/output/pager.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <iostream>
#include <system_error>

namespace trace2d::ctl {

namespace {

// Whether `program` is an executable file in a directory of PATH.
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (!dirs.empty()) {
    const auto colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    if (::access(((dir.empty() ? std::string(".") : dir) + "/" + program).c_str(), X_OK) == 0) {
      return true;
    }
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
  }
  return false;
}

}  // namespace

std::optional<std::string> pager_command() {
  std::string command;
  for (const char* name : {"TRACE2CTL_PAGER", "PAGER"}) {
    if (const char* value = std::getenv(name); value != nullptr) {
      command = value;
      break;
    }
  }
  if (command.empty() && std::getenv("TRACE2CTL_PAGER") == nullptr && std::getenv("PAGER") == nullptr) {
    // Nothing asked for: less if there is one. A pager that is not there
    // would take the output with it (the shell says "not found", and the
    // write to its pipe ends trace2ctl).
    if (!on_path("less")) {
      return std::nullopt;
    }
    command = "less";
  }
  if (command.find_first_not_of(" \t") == std::string::npos || command == "cat") {
    return std::nullopt;
  }
  return command;
}

Pager::Pager(const std::string& command) {
  // Set here, not in the child, where only async-signal-safe calls belong.
  ::setenv("LESS", "FRX", 0);
  ::setenv("LV", "-c", 0);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "cannot start the pager: pipe");
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::system_error(error, std::generic_category(), "cannot start the pager: fork");
  }
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec.
    ::dup2(fds[0], STDIN_FILENO);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[0]);
  if (::dup2(fds[1], STDOUT_FILENO) < 0) {
    const int error = errno;
    ::close(fds[1]);
    throw std::system_error(error, std::generic_category(), "cannot start the pager: dup2");
  }
  ::close(fds[1]);
  m_pid = pid;
}

Pager::~Pager() {
  // All of the output to the pager, then end of input for it; then wait,
  // retrying on signals.
  std::cout.flush();
  ::close(STDOUT_FILENO);
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace trace2d::ctl
