#pragma once
// trace2d client, C++ API: emit Git Trace2 events (git's EVENT format,
// evt "4") from any program, so that the git processes it starts appear
// under it in trace2d. Same implementation as the C ABI in client.h.
//
//   int main(int argc, char** argv) {
//     trace2d::client::start(argc, argv);            // GIT_TRACE2_EVENT decides
//     trace2d::client::Region r("build", "compile");  // region_enter ... region_leave
//     trace2d::client::run_child({"git", "fetch", "-q"});
//     return trace2d::client::exit(0);
//   }
//
// Nothing here throws or blocks on the collector: events go through a
// bounded queue to a background writer; when it is full they are dropped
// and counted (reported at exit as data "trace2d"/"dropped_events").
// Optional strings (category, label, msg, ...) are absent when empty.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <trace2d/client.h>

namespace trace2d::client {

using Location = std::source_location;

struct Options {
  // Where events go, in GIT_TRACE2_EVENT syntax. Empty: GIT_TRACE2_EVENT.
  std::string target{};
  // version.exe and the first cmd_name. Empty: the base name of argv[0].
  std::string exe{};
  std::string cmd_name{};
  // Bound of the queue between callers and the writer thread.
  std::size_t queue_bytes = std::size_t{1} << 20;
  // At exit, the longest wait for the collector.
  std::chrono::milliseconds exit_flush_timeout{150};
  // Set GIT_TRACE2_PARENT_SID / GIT_TRACE2_PARENT_NAME in the environment so
  // that every child (also via std::system) becomes this session's child.
  bool export_environment = true;
  // Send a "signal" event when a fatal signal with the default action kills
  // the process (handlers are installed only where none exists).
  bool signal_events = true;
};

// Starts the session (version, start, cmd_name). Call once, early, from the
// main thread. True when events are being sent.
TRACE2D_CLIENT_API bool start(int argc, const char* const* argv, const Options& options = {},
                              Location loc = Location::current()) noexcept;
TRACE2D_CLIENT_API bool enabled() noexcept;
// This process's SID; empty when tracing is off. Valid until exit.
TRACE2D_CLIENT_API std::string_view sid() noexcept;
// Records the exit code sent at process exit and returns it:
// `return trace2d::client::exit(code);`.
TRACE2D_CLIENT_API int exit(int code, Location loc = Location::current()) noexcept;

// Waits until every event sent so far is handed to the collector, at most
// `timeout`. True when it was (or tracing is off). See trace2d_flush().
inline bool flush(std::chrono::milliseconds timeout) noexcept {
  return trace2d_flush(static_cast<unsigned>(timeout.count() < 0 ? 0 : timeout.count())) != 0;
}
// Ends the session now as exit(code) would, then sends nothing more. True
// when every event was handed over and none dropped. See trace2d_shutdown().
inline bool shutdown(int code, std::chrono::milliseconds timeout = std::chrono::milliseconds(150),
                     Location loc = Location::current()) noexcept {
  return trace2d_shutdown_fl(loc.file_name(), static_cast<int>(loc.line()), code,
                             static_cast<unsigned>(timeout.count() < 0 ? 0 : timeout.count())) != 0;
}
// execvp() with the session ended and flushed first (see trace2d_execvp()):
// returns only when it failed, -1 with errno set.
inline int execvp(const char* program, const char* const* argv,
                  Location loc = Location::current()) noexcept {
  return trace2d_execvp_fl(loc.file_name(), static_cast<int>(loc.line()), program, argv);
}

TRACE2D_CLIENT_API void cmd_name(std::string_view name,
                                 Location loc = Location::current()) noexcept;
TRACE2D_CLIENT_API void cmd_mode(std::string_view mode,
                                 Location loc = Location::current()) noexcept;
TRACE2D_CLIENT_API void def_param(std::string_view param, std::string_view value,
                                  std::string_view scope = {},
                                  Location loc = Location::current()) noexcept;
TRACE2D_CLIENT_API void def_repo(int repo, std::string_view worktree,
                                 Location loc = Location::current()) noexcept;

// repo 0: no "repo" field.
TRACE2D_CLIENT_API void region_enter(std::string_view category, std::string_view label,
                                     std::string_view msg = {}, int repo = 0,
                                     Location loc = Location::current()) noexcept;
TRACE2D_CLIENT_API void region_leave(std::string_view category, std::string_view label,
                                     std::string_view msg = {}, int repo = 0,
                                     Location loc = Location::current()) noexcept;

TRACE2D_CLIENT_API void data(std::string_view category, std::string_view key,
                             std::string_view value, int repo = 0,
                             Location loc = Location::current()) noexcept;
TRACE2D_CLIENT_API void data(std::string_view category, std::string_view key, std::int64_t value,
                             int repo = 0, Location loc = Location::current()) noexcept;
// `json` must be one valid JSON value; anything else is not sent.
TRACE2D_CLIENT_API void data_json(std::string_view category, std::string_view key,
                                  std::string_view json, int repo = 0,
                                  Location loc = Location::current()) noexcept;

// An "error" event; `fmt` is the message's format, for grouping.
TRACE2D_CLIENT_API void error(std::string_view msg, std::string_view fmt = {},
                              Location loc = Location::current()) noexcept;
// A "printf" event.
TRACE2D_CLIENT_API void message(std::string_view msg, Location loc = Location::current()) noexcept;

// region_enter now, region_leave (same category and label) at scope exit.
class TRACE2D_CLIENT_API Region {
 public:
  explicit Region(std::string_view category, std::string_view label, std::string_view msg = {},
                  int repo = 0, Location loc = Location::current()) noexcept;
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

 private:
  Location m_loc;
  int m_repo;
  bool m_entered;
};

// The calling thread becomes "thNN:name" (thread_start); at scope exit its
// per-thread timers and counters, then thread_exit. Put it first in the
// thread's function.
class TRACE2D_CLIENT_API Thread {
 public:
  explicit Thread(std::string_view name, Location loc = Location::current()) noexcept;
  ~Thread();
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;

 private:
  Location m_loc;
  int m_kind;
};

// A stopwatch, defined once (usually `static`); git's timer/th_timer.
class TRACE2D_CLIENT_API Timer {
 public:
  Timer(std::string_view category, std::string_view name, bool per_thread = false) noexcept;
  void start() noexcept;
  void stop() noexcept;

  class Scope {
   public:
    explicit Scope(Timer& timer) noexcept : m_timer(timer) { m_timer.start(); }
    ~Scope() { m_timer.stop(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Timer& m_timer;
  };

 private:
  int m_id;
};

// git's counter/th_counter.
class TRACE2D_CLIENT_API Counter {
 public:
  Counter(std::string_view category, std::string_view name, bool per_thread = false) noexcept;
  void add(std::int64_t value = 1) noexcept;

 private:
  int m_id;
};

struct ChildOptions {
  std::string child_class{};       // empty: "?" as git
  std::string hook_name{};         // set: child_class becomes "hook"
  std::string cd{};                // working directory of the child
  bool use_shell = false;          // through /bin/sh -c, as git does
  std::vector<std::string> env{};  // extra "NAME=value"
  int stdin_fd = -1;               // -1: inherited
  int stdout_fd = -1;
  int stderr_fd = -1;
};

struct ChildResult {
  int child_id = -1;  // -1 when tracing is off
  pid_t pid = -1;     // -1 when it could not be started
  int code = -1;      // exit code, 128+signal, or -1 (not started), as git
};

// Runs argv to completion with GIT_TRACE2_PARENT_SID/NAME exported, sending
// child_start and child_exit. Runs it whether or not tracing is on.
TRACE2D_CLIENT_API ChildResult run_child(std::span<const std::string> argv,
                                         const ChildOptions& options = {},
                                         Location loc = Location::current()) noexcept;
TRACE2D_CLIENT_API ChildResult run_child(std::initializer_list<std::string_view> argv,
                                         const ChildOptions& options = {},
                                         Location loc = Location::current()) noexcept;

// Wraps a child the program starts itself: child_start now, child_exit on
// finish() (or with code -1 at scope exit when finish() was not called).
// Spawned with the inherited environment, the child already sees
// GIT_TRACE2_PARENT_SID (Options::export_environment); environment() is for
// programs that build their own.
class TRACE2D_CLIENT_API Child {
 public:
  explicit Child(std::span<const std::string> argv, const ChildOptions& options = {},
                 Location loc = Location::current()) noexcept;
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // pid 0 when unknown (std::system); code as git's (see child_code).
  void finish(pid_t pid, int code, Location loc = Location::current()) noexcept;
  [[nodiscard]] int id() const { return m_id; }

 private:
  int m_id;
  bool m_finished = false;
  Location m_loc;
};

// A waitpid()/std::system() status as git's child code.
TRACE2D_CLIENT_API int child_code(int wait_status) noexcept;
// "GIT_TRACE2_PARENT_SID=..." and "GIT_TRACE2_PARENT_NAME=..." for a child.
TRACE2D_CLIENT_API std::vector<std::string> child_environment();

}  // namespace trace2d::client
