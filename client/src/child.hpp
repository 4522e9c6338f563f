#pragma once
// The child helper: posix_spawn a program with GIT_TRACE2_PARENT_SID and
// GIT_TRACE2_PARENT_NAME (and the target, when the program chose it) in its
// environment, wait for it, and report child_start/child_exit like git's
// run-command.c. The child runs whether or not tracing is on.

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
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

// git's start_command(): child_start, then the child spawned with what it
// needs to be stitched under the session in its environment, with a pipe
// for each stream `pipes` asks for (replacing the request's descriptor).
// `ends` receives this process's end of each (close-on-exec, -1 where none
// was asked for); the caller owns them. A child that cannot be started
// gets its child_exit (pid and code -1) at once, as git sends it; its pid
// is then -1 and no pipe is left open.
struct PipeRequest {
  bool in = false;
  bool out = false;
  bool err = false;
};
struct PipeEnds {
  int in = -1;   // write end of the child's stdin
  int out = -1;  // read end of its stdout
  int err = -1;  // read end of its stderr
};
[[nodiscard]] ChildOutcome start_command(const SpawnRequest& request, const PipeRequest& pipes,
                                         PipeEnds& ends, Where where);

// git's finish_command(): waits for a child start_command() started,
// killing it with SIGKILL at `deadline_us` (mono_us(); 0: never), which
// sets `timed_out`; then child_exit. Returns git's code (-1 for a child
// that never started: its child_exit was sent by start_command).
[[nodiscard]] int finish_command(const ChildOutcome& started, std::int64_t deadline_us,
                                 bool& timed_out, Where where) noexcept;

// start_command and finish_command in one: the child's streams as the
// request says, waited for without a limit.
[[nodiscard]] ChildOutcome run_child(const SpawnRequest& request, Where where);

// run_child with the child's stdout and/or stderr read into memory while it
// runs (both pipes drained together by poll(): no deadlock however much it
// writes), and a timeout after which it is killed (SIGKILL: code 137, as
// git reports a signal). Reading goes on after the kill until the pipes
// close, at most one second more (a grandchild may hold them).
struct CaptureRequest {
  bool out = false;
  bool err = false;
  std::int64_t timeout_ms = 0;  // 0: none
};
struct CapturedOutput {
  std::string out;
  std::string err;
  bool timed_out = false;
};
[[nodiscard]] ChildOutcome run_child_captured(const SpawnRequest& request,
                                              const CaptureRequest& capture,
                                              CapturedOutput& output, Where where);

// execvp(program, argv) after the session's exec event, final events and
// flush (Session::end_before_exec); on failure an exec_result, and -1 with
// execvp's errno. The environment carries what a child needs to be
// stitched under the session even when the program keeps its own
// environment untouched (Config::export_environment false).
[[nodiscard]] int exec_program(const char* program, const char* const* argv, Where where) noexcept;

// git's finish_command() code: the exit code, 128 + the signal, else -1.
[[nodiscard]] int child_code(int wait_status);

}  // namespace trace2d::client::detail
