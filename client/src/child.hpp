#pragma once
// The child helper: posix_spawn a program with GIT_TRACE2_PARENT_SID and
// GIT_TRACE2_PARENT_NAME (and the target, when the program chose it) in its
// environment, wait for it, and report child_start/child_exit like git's
// run-command.c. The child runs whether or not tracing is on.

#include <sys/types.h>

#include <span>
#include <string_view>

#include "client/src/line_builder.hpp"
#include "client/src/session.hpp"

namespace trace2d::client::detail {

struct SpawnRequest {
  std::span<const std::string_view> argv;
  ChildSpec spec;
  std::span<const std::string_view> extra_env;  // "NAME=value"
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
};

struct ChildOutcome {
  int child_id = -1;
  pid_t pid = -1;
  int code = -1;
};

[[nodiscard]] ChildOutcome run_child(const SpawnRequest& request, Where where);

// execvp(program, argv) after the session's exec event, final events and
// flush (Session::end_before_exec); on failure an exec_result, and -1 with
// execvp's errno. The environment carries what a child needs to be
// stitched under the session even when the program keeps its own
// environment untouched (Config::export_environment false).
[[nodiscard]] int exec_program(const char* program, const char* const* argv, Where where) noexcept;

// git's finish_command() code: the exit code, 128 + the signal, else -1.
[[nodiscard]] int child_code(int wait_status);

}  // namespace trace2d::client::detail
