#ifndef TRACE2D_CLIENT_HPP
#define TRACE2D_CLIENT_HPP
// trace2d client, C++ API: emit Git Trace2 events (git's EVENT format,
// evt "4") from any program, so that the git processes it starts appear
// under it in trace2d.
//
//   int main(int argc, char** argv) {
//     trace2d::client::start(argc, argv);            // GIT_TRACE2_EVENT decides
//     trace2d::client::Region r("build", "compile");  // region_enter ... region_leave
//     trace2d::client::run_child({"git", "fetch", "-q"});
//     return trace2d::client::exit(0);
//   }
//
// Header-only: every function here is an inline wrapper over the C ABI of
// client.h, the only thing the library exports. No C++ type crosses the
// library boundary, so a program built with this header keeps working
// with any later 1.x library, whatever fields Options gains (see the ABI
// policy in client/README.md). C++17 or later; g++ >= 8, clang++ >= 9.
//
// Nothing here throws or blocks on the collector: events go through a
// bounded queue to a background writer; when it is full they are dropped
// and counted (dropped(), and at exit data "trace2d"/"dropped_events").
// Optional strings (category, label, msg, ...) are absent when empty.

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#endif
#if defined(__cpp_lib_span)
#include <span>
#endif
#if defined(__cpp_lib_source_location)
#include <source_location>
#endif

#include <trace2d/client.h>

// Whether this translation unit may use try/catch (-fno-exceptions turns
// them off; the header then compiles without them: allocation failure
// aborts there anyway).
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define TRACE2D_CLIENT_TRY try
#define TRACE2D_CLIENT_CATCH_ALL catch (...)
#else
#define TRACE2D_CLIENT_TRY if (true)
#define TRACE2D_CLIENT_CATCH_ALL else
#endif

namespace trace2d {
namespace client {
// Versioned: a program holding two copies of this header from different
// major versions (through two libraries) gets two sets of inline
// functions instead of one silently picked at random (an ODR violation).
inline namespace v1 {

#if defined(TRACE2D_CLIENT_OFF)
// The compile-time off switch: with TRACE2D_CLIENT_OFF defined before this
// header, every call compiles to nothing (these stubs hide the library's C
// functions from the inline API below, by name lookup: the API calls them
// as `(trace2d_name)(...)`, whose parentheses keep argument-dependent
// lookup from finding the global ones too), start() returns
// false and off_reason() says why. Only the child runners (run_child,
// run_child_captured, execvp) and child_code still call the library: they
// must run the program. A program that uses none of them needs no library.
inline int trace2d_start_fl(const char*, int, int, const char* const*,
                            const trace2d_options*) noexcept {
  return 0;
}
inline int trace2d_enabled() noexcept { return 0; }
inline const char* trace2d_sid() noexcept { return ""; }
inline const char* trace2d_off_reason() noexcept {
  return "compiled out: TRACE2D_CLIENT_OFF was defined";
}
inline std::uint64_t trace2d_dropped() noexcept { return 0; }
inline std::uint64_t trace2d_dropped_by(int) noexcept { return 0; }
inline char* trace2d_memory_take(std::size_t* size_out) noexcept {
  *size_out = 0;
  return nullptr;
}
inline int trace2d_exit_fl(const char*, int, int code) noexcept { return code; }
inline int trace2d_flush(unsigned) noexcept { return 1; }
inline int trace2d_shutdown_fl(const char*, int, int, unsigned) noexcept { return 1; }
inline void trace2d_cmd_name_s(const char*, int, trace2d_str) noexcept {}
inline void trace2d_cmd_mode_s(const char*, int, trace2d_str) noexcept {}
inline void trace2d_def_param_s(const char*, int, trace2d_str, trace2d_str, trace2d_str) noexcept {}
inline void trace2d_def_repo_s(const char*, int, int, trace2d_str) noexcept {}
inline int trace2d_region_enter_s(const char*, int, trace2d_str, trace2d_str, int,
                                  trace2d_str) noexcept {
  return 0;
}
inline void trace2d_region_leave_s(const char*, int, trace2d_str, trace2d_str, int,
                                   trace2d_str) noexcept {}
inline std::uint64_t trace2d_region_enter_token_s(const char*, int, trace2d_str, trace2d_str, int,
                                                  trace2d_str) noexcept {
  return 0;
}
inline void trace2d_region_leave_token_fl(const char*, int, std::uint64_t, int) noexcept {}
inline void trace2d_data_string_s(const char*, int, trace2d_str, int, trace2d_str,
                                  trace2d_str) noexcept {}
inline void trace2d_data_intmax_s(const char*, int, trace2d_str, int, trace2d_str,
                                  std::intmax_t) noexcept {}
inline void trace2d_data_uintmax_s(const char*, int, trace2d_str, int, trace2d_str,
                                   std::uintmax_t) noexcept {}
inline void trace2d_data_double_s(const char*, int, trace2d_str, int, trace2d_str,
                                  double) noexcept {}
inline void trace2d_data_bool_s(const char*, int, trace2d_str, int, trace2d_str, int) noexcept {}
inline int trace2d_data_json_s(const char*, int, trace2d_str, int, trace2d_str,
                               trace2d_str) noexcept {
  return 1;
}
inline void trace2d_error_s(const char*, int, trace2d_str, trace2d_str) noexcept {}
inline void trace2d_printf_s(const char*, int, trace2d_str) noexcept {}
inline void trace2d_thread_start_s(const char*, int, trace2d_str) noexcept {}
inline void trace2d_thread_exit_fl(const char*, int) noexcept {}
inline int trace2d_timer_define_s(trace2d_str, trace2d_str, int) noexcept { return -1; }
inline void trace2d_timer_start(int) noexcept {}
inline void trace2d_timer_stop(int) noexcept {}
inline int trace2d_counter_define_s(trace2d_str, trace2d_str, int) noexcept { return -1; }
inline void trace2d_counter_add(int, std::int64_t) noexcept {}
inline int trace2d_child_start_s(const char*, int, const trace2d_str*, std::size_t,
                                 const trace2d_child_options*) noexcept {
  return -1;
}
inline void trace2d_child_exit_fl(const char*, int, int, pid_t, int) noexcept {}
inline std::size_t trace2d_child_environment(char*, std::size_t) noexcept { return 0; }
inline void trace2d_options_init_size(trace2d_options* options, std::size_t) noexcept {
  *options = trace2d_options{};
  options->struct_size = sizeof *options;
}
inline void trace2d_child_options_init(trace2d_child_options* options) noexcept {
  *options = trace2d_child_options{};
  options->struct_size = sizeof *options;
  options->stdin_fd = options->stdout_fd = options->stderr_fd = -1;
}
#endif

// The caller's file and line, which become the events' "file" and "line".
// From std::source_location where the standard library has it (C++20;
// clang 14 with libstdc++ 12 has not), else from the compiler's
// __builtin_FILE/__builtin_LINE, which are what it is made of.
//
// Either is taken where the call is written: a default argument is
// evaluated at the call. std::make_unique<Region>(...) and
// optional<Region>::emplace(...) call the constructor from inside the
// standard library, so they would record its header: construct the guard
// where it is written and move it (`std::make_unique<Region>(Region(...))`,
// `opt = Region(...)`), or pass Location::current() yourself.
class Location {
 public:
#if defined(__cpp_lib_source_location)
  static constexpr Location current(
      const std::source_location& loc = std::source_location::current()) noexcept {
    return Location(loc);
  }
#else
  static constexpr Location current(const char* file = __builtin_FILE(),
                                    int line = __builtin_LINE()) noexcept {
    return Location(file, line);
  }
#endif
  constexpr Location(const char* file, int line) noexcept : m_file(file), m_line(line) {}
#if defined(__cpp_lib_source_location)
  // NOLINTNEXTLINE(google-explicit-constructor): a source_location is a Location
  constexpr Location(const std::source_location& loc) noexcept
      : m_file(loc.file_name()), m_line(static_cast<int>(loc.line())) {}
#endif
  [[nodiscard]] constexpr const char* file_name() const noexcept { return m_file; }
  [[nodiscard]] constexpr int line() const noexcept { return m_line; }

 private:
  const char* m_file;
  int m_line;
};

namespace c_abi {

inline trace2d_str str(std::string_view s) noexcept { return trace2d_str{s.data(), s.size()}; }

inline unsigned milliseconds(std::chrono::milliseconds timeout) noexcept {
  const auto count = timeout.count();
  return count <= 0 ? 0U : count >= 0xffffffffLL ? 0xffffffffU : static_cast<unsigned>(count);
}

}  // namespace c_abi

struct Options {
  // Where events go, in GIT_TRACE2_EVENT syntax. Empty: GIT_TRACE2_EVENT.
  std::string target{};
  // The program's version ("2.4.1"), sent as version.exe, where git sends
  // its own version. Empty: `exe`.
  std::string version{};
  // version.exe when `version` is empty (1.0's only way). Empty: the base
  // name of argv[0].
  std::string exe{};
  // The first cmd_name. Empty: the base name of argv[0].
  std::string cmd_name{};
  // Bound of the queue between callers and the writer thread.
  std::size_t queue_bytes = std::size_t{1} << 20;
  // At exit (and before execvp), the longest wait for a collector that takes
  // nothing; while it takes the queue, the exit waits up to the queue's
  // bytes at 1 MB/s (client/README.md, "Exit waits for a collector ...").
  std::chrono::milliseconds exit_flush_timeout{150};
  // Set GIT_TRACE2_PARENT_SID / GIT_TRACE2_PARENT_NAME in the environment so
  // that every child (also via std::system) becomes this session's child.
  bool export_environment = true;
  // Send a "signal" event when a fatal signal with the default action kills
  // the process (handlers are installed only where none exists).
  bool signal_events = true;
};

// Starts the session (version, start, cmd_name). Call once, early, from the
// main thread. True when events are being sent; off_reason() says why not.
inline bool start(int argc, const char* const* argv, const Options& options = {},
                  Location loc = Location::current()) noexcept {
  trace2d_options o;
  // Our size, so that the library sets up (and later reads) 1.1's fields too.
  (trace2d_options_init_size)(&o, sizeof o);
  o.target = options.target.c_str();
  o.exe = options.exe.c_str();
  o.version = options.version.c_str();
  o.cmd_name = options.cmd_name.c_str();
  o.queue_bytes = options.queue_bytes;
  o.exit_flush_ms = c_abi::milliseconds(options.exit_flush_timeout);
  o.export_environment = options.export_environment ? 1 : 0;
  o.signal_events = options.signal_events ? 1 : 0;
  return (trace2d_start_fl)(loc.file_name(), loc.line(), argc, argv, &o) != 0;
}
inline bool start(int argc, char** argv, const Options& options = {},
                  Location loc = Location::current()) noexcept {
  return start(argc, const_cast<const char* const*>(argv), options, loc);
}

inline bool enabled() noexcept { return (trace2d_enabled)() != 0; }
// This process's SID; empty when no session was started (it stays after
// shutdown() and a failed target). Valid until exit.
inline std::string_view sid() noexcept { return (trace2d_sid)(); }
// Why tracing is off ("" while it is on): see trace2d_off_reason().
inline std::string_view off_reason() noexcept { return (trace2d_off_reason)(); }
// Events not sent so far, whatever the reason; dropped(reason) by reason.
inline std::uint64_t dropped() noexcept { return (trace2d_dropped)(); }
enum class DropReason : int {
  queue_full = TRACE2D_DROP_QUEUE_FULL,  // a slow or stopped collector
  target = TRACE2D_DROP_TARGET,          // the target failed or did not take them by exit
  nesting = TRACE2D_DROP_NESTING,        // deeper than GIT_TRACE2_EVENT_NESTING, as git
};
inline std::uint64_t dropped(DropReason reason) noexcept {
  return (trace2d_dropped_by)(static_cast<int>(reason));
}

// With Options::target = "memory:", the event lines written since the last
// call (after a flush of at most 1 s), for the program's own unit tests.
// Not noexcept: it returns a string. See trace2d_memory_take().
inline std::string memory_events() {
  std::size_t size = 0;
  char* events = (trace2d_memory_take)(&size);
  std::string out;
  if (events != nullptr) {
    out.assign(events, size);
    std::free(events);
  }
  return out;
}

// Records the exit code sent at process exit and returns it:
// `return trace2d::client::exit(code);`. (The name is in parentheses so
// that client.h's TRACE2D_WRAP_EXIT macro leaves it alone.)
inline int(exit)(int code, Location loc = Location::current()) noexcept {
  return (trace2d_exit_fl)(loc.file_name(), loc.line(), code);
}

// Waits until every event sent so far is handed to the collector, at most
// `timeout`. True when it was (or tracing is off). See trace2d_flush().
inline bool flush(std::chrono::milliseconds timeout) noexcept {
  return (trace2d_flush)(c_abi::milliseconds(timeout)) != 0;
}
// Ends the session now as exit(code) would, then sends nothing more. True
// when every event was handed over and none dropped. See trace2d_shutdown().
inline bool shutdown(int code, std::chrono::milliseconds timeout = std::chrono::milliseconds(150),
                     Location loc = Location::current()) noexcept {
  return (trace2d_shutdown_fl)(loc.file_name(), loc.line(), code, c_abi::milliseconds(timeout)) != 0;
}
// execvp() with the session ended and flushed first (see trace2d_execvp()):
// returns only when it failed, -1 with errno set.
inline int execvp(const char* program, const char* const* argv,
                  Location loc = Location::current()) noexcept {
  return (trace2d_execvp_fl)(loc.file_name(), loc.line(), program, argv);
}

inline void cmd_name(std::string_view name, Location loc = Location::current()) noexcept {
  (trace2d_cmd_name_s)(loc.file_name(), loc.line(), c_abi::str(name));
}
inline void cmd_mode(std::string_view mode, Location loc = Location::current()) noexcept {
  (trace2d_cmd_mode_s)(loc.file_name(), loc.line(), c_abi::str(mode));
}
inline void def_param(std::string_view param, std::string_view value, std::string_view scope = {},
                      Location loc = Location::current()) noexcept {
  (trace2d_def_param_s)(loc.file_name(), loc.line(), c_abi::str(param), c_abi::str(value),
                      c_abi::str(scope));
}
inline void def_repo(int repo, std::string_view worktree,
                     Location loc = Location::current()) noexcept {
  (trace2d_def_repo_s)(loc.file_name(), loc.line(), repo, c_abi::str(worktree));
}

// repo 0: no "repo" field.
inline void region_enter(std::string_view category, std::string_view label,
                         std::string_view msg = {}, int repo = 0,
                         Location loc = Location::current()) noexcept {
  (trace2d_region_enter_s)(loc.file_name(), loc.line(), c_abi::str(category), c_abi::str(label),
                         repo, c_abi::str(msg));
}
inline void region_leave(std::string_view category, std::string_view label,
                         std::string_view msg = {}, int repo = 0,
                         Location loc = Location::current()) noexcept {
  (trace2d_region_leave_s)(loc.file_name(), loc.line(), c_abi::str(category), c_abi::str(label),
                         repo, c_abi::str(msg));
}

// Typed data, each type sent as what it is: text as it is, integers in
// full, a double as the shortest text that reads back the same ("0.93"),
// bool as "true"/"false". A value of any other type does not compile
// (pointers, char, long double, nullptr): nothing is converted silently.
inline void data(std::string_view category, std::string_view key, std::string_view value,
                 int repo = 0, Location loc = Location::current()) noexcept {
  (trace2d_data_string_s)(loc.file_name(), loc.line(), c_abi::str(category), repo,
                        c_abi::str(key), c_abi::str(value));
}
inline void data(std::string_view category, std::string_view key, const char* value,
                 int repo = 0, Location loc = Location::current()) noexcept {
  data(category, key, value == nullptr ? std::string_view() : std::string_view(value), repo, loc);
}
inline void data(std::string_view category, std::string_view key, char* value, int repo = 0,
                 Location loc = Location::current()) noexcept {
  data(category, key, static_cast<const char*>(value), repo, loc);
}
inline void data(std::string_view category, std::string_view key, const std::string& value,
                 int repo = 0, Location loc = Location::current()) noexcept {
  data(category, key, std::string_view(value), repo, loc);
}
inline void data(std::string_view category, std::string_view key, std::int64_t value,
                 int repo = 0, Location loc = Location::current()) noexcept {
  (trace2d_data_intmax_s)(loc.file_name(), loc.line(), c_abi::str(category), repo,
                        c_abi::str(key), value);
}
inline void data(std::string_view category, std::string_view key, double value, int repo = 0,
                 Location loc = Location::current()) noexcept {
  (trace2d_data_double_s)(loc.file_name(), loc.line(), c_abi::str(category), repo,
                        c_abi::str(key), value);
}
inline void data(std::string_view category, std::string_view key, float value, int repo = 0,
                 Location loc = Location::current()) noexcept {
  data(category, key, static_cast<double>(value), repo, loc);
}
inline void data(std::string_view category, std::string_view key, bool value, int repo = 0,
                 Location loc = Location::current()) noexcept {
  (trace2d_data_bool_s)(loc.file_name(), loc.line(), c_abi::str(category), repo, c_abi::str(key),
                      value ? 1 : 0);
}
// Every other integer type, signed ones as intmax, unsigned ones in full.
template <typename Integer,
          typename std::enable_if<std::is_integral<Integer>::value &&
                                      !std::is_same<Integer, bool>::value &&
                                      !std::is_same<Integer, char>::value &&
                                      !std::is_same<Integer, std::int64_t>::value,
                                  int>::type = 0>
inline void data(std::string_view category, std::string_view key, Integer value, int repo = 0,
                 Location loc = Location::current()) noexcept {
  if (std::is_signed<Integer>::value) {
    (trace2d_data_intmax_s)(loc.file_name(), loc.line(), c_abi::str(category), repo,
                          c_abi::str(key), static_cast<std::intmax_t>(value));
  } else {
    (trace2d_data_uintmax_s)(loc.file_name(), loc.line(), c_abi::str(category), repo,
                           c_abi::str(key), static_cast<std::uintmax_t>(value));
  }
}
// A pointer would become "true", a char a number, a long double a rounded
// double: none of them is sent silently.
template <typename Pointee>
void data(std::string_view, std::string_view, Pointee*, int = 0,
          Location = Location::current()) = delete;
void data(std::string_view, std::string_view, std::nullptr_t, int = 0,
          Location = Location::current()) = delete;
void data(std::string_view, std::string_view, char, int = 0, Location = Location::current()) = delete;
void data(std::string_view, std::string_view, long double, int = 0,
          Location = Location::current()) = delete;
// `json` must be one valid JSON value: false (and nothing sent) otherwise.
inline bool data_json(std::string_view category, std::string_view key, std::string_view json,
                      int repo = 0, Location loc = Location::current()) noexcept {
  return (trace2d_data_json_s)(loc.file_name(), loc.line(), c_abi::str(category), repo,
                             c_abi::str(key), c_abi::str(json)) != 0;
}

// An "error" event; `fmt` is the message's format, for grouping.
inline void error(std::string_view msg, std::string_view fmt = {},
                  Location loc = Location::current()) noexcept {
  (trace2d_error_s)(loc.file_name(), loc.line(), c_abi::str(msg), c_abi::str(fmt));
}
// A "printf" event.
inline void message(std::string_view msg, Location loc = Location::current()) noexcept {
  (trace2d_printf_s)(loc.file_name(), loc.line(), c_abi::str(msg));
}

// region_enter now, and at scope exit (or leave()) the leave of this very
// region: its category, label and nesting, whatever regions were entered
// or left meanwhile and from whichever thread the guard ends on (see
// trace2d_region_leave_token in client.h). Movable, so that a guard made
// where it is written can go into a unique_ptr, an optional or a
// container: `auto r = std::make_unique<Region>(Region("build", "link"));`.
class Region {
 public:
  explicit Region(std::string_view category, std::string_view label, std::string_view msg = {},
                  int repo = 0, Location loc = Location::current()) noexcept
      : m_loc(loc),
        m_repo(repo),
        m_token((trace2d_region_enter_token_s)(loc.file_name(), loc.line(), c_abi::str(category),
                                             c_abi::str(label), repo, c_abi::str(msg))) {}
  ~Region() { leave(m_loc); }
  Region(Region&& other) noexcept
      : m_loc(other.m_loc), m_repo(other.m_repo), m_token(std::exchange(other.m_token, 0)) {}
  Region& operator=(Region&& other) noexcept {
    if (this != &other) {
      leave(m_loc);
      m_loc = other.m_loc;
      m_repo = other.m_repo;
      m_token = std::exchange(other.m_token, 0);
    }
    return *this;
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  // Leaves the region now (once; the destructor then does nothing).
  void leave(Location loc = Location::current()) noexcept {
    if (m_token != 0) {
      (trace2d_region_leave_token_fl)(loc.file_name(), loc.line(), std::exchange(m_token, 0),
                                    m_repo);
    }
  }

 private:
  Location m_loc;
  int m_repo;
  std::uint64_t m_token;  // 0: not entered (tracing off) or left
};

// The calling thread becomes "thNN:name" (thread_start); at scope exit its
// per-thread timers and counters, then thread_exit. Put it first in the
// thread's function.
class Thread {
 public:
  explicit Thread(std::string_view name, Location loc = Location::current()) noexcept
      : m_loc(loc) {
    (trace2d_thread_start_s)(loc.file_name(), loc.line(), c_abi::str(name));
  }
  ~Thread() { (trace2d_thread_exit_fl)(m_loc.file_name(), m_loc.line()); }
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;

 private:
  Location m_loc;
};

// A stopwatch, defined once (usually `static`); git's timer/th_timer. At
// most TRACE2D_MAX_TIMERS timers per process: further ones do nothing.
class Timer {
 public:
  Timer(std::string_view category, std::string_view name, bool per_thread = false) noexcept
      : m_id((trace2d_timer_define_s)(c_abi::str(category), c_abi::str(name), per_thread ? 1 : 0)) {}
  void start() noexcept { (trace2d_timer_start)(m_id); }
  void stop() noexcept { (trace2d_timer_stop)(m_id); }
  // -1 when it could not be defined (over the limit).
  [[nodiscard]] int id() const noexcept { return m_id; }

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

// git's counter/th_counter. At most TRACE2D_MAX_COUNTERS per process.
class Counter {
 public:
  Counter(std::string_view category, std::string_view name, bool per_thread = false) noexcept
      : m_id((trace2d_counter_define_s)(c_abi::str(category), c_abi::str(name),
                                      per_thread ? 1 : 0)) {}
  void add(std::int64_t value = 1) noexcept { (trace2d_counter_add)(m_id, value); }
  [[nodiscard]] int id() const noexcept { return m_id; }

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

namespace c_abi {

// The C view of ChildOptions; valid while `options` and `env` live.
inline trace2d_child_options child_options(const ChildOptions& options,
                                           std::vector<const char*>& env) {
  trace2d_child_options o;
  (trace2d_child_options_init)(&o);
  o.child_class = options.child_class.empty() ? nullptr : options.child_class.c_str();
  o.hook_name = options.hook_name.empty() ? nullptr : options.hook_name.c_str();
  o.cd = options.cd.empty() ? nullptr : options.cd.c_str();
  o.use_shell = options.use_shell ? 1 : 0;
  for (const std::string& entry : options.env) {
    env.push_back(entry.c_str());
  }
  env.push_back(nullptr);
  o.env = env.data();
  o.stdin_fd = options.stdin_fd;
  o.stdout_fd = options.stdout_fd;
  o.stderr_fd = options.stderr_fd;
  return o;
}

template <typename Strings>
std::vector<trace2d_str> strs(const Strings& strings) {
  std::vector<trace2d_str> out;
  out.reserve(strings.size());
  for (const auto& s : strings) {
    out.push_back(str(s));
  }
  return out;
}

template <typename Strings>
ChildResult run_child(const Strings& argv, const ChildOptions& options, Location loc) noexcept {
  ChildResult result;
  TRACE2D_CLIENT_TRY {
    std::vector<const char*> env;
    const trace2d_child_options o = child_options(options, env);
    const std::vector<trace2d_str> args = strs(argv);
    result.code = (trace2d_run_child_s)(loc.file_name(), loc.line(), args.data(), args.size(), &o,
                                      &result.pid, &result.child_id);
  }
  TRACE2D_CLIENT_CATCH_ALL {
    // Out of memory before anything ran: reported as git reports a child
    // it could not start.
  }
  return result;
}

}  // namespace c_abi

// Runs argv to completion with GIT_TRACE2_PARENT_SID/NAME exported, sending
// child_start and child_exit. Runs it whether or not tracing is on.
inline ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options = {},
                             Location loc = Location::current()) noexcept {
  return c_abi::run_child(argv, options, loc);
}
inline ChildResult run_child(std::initializer_list<std::string_view> argv,
                             const ChildOptions& options = {},
                             Location loc = Location::current()) noexcept {
  return c_abi::run_child(argv, options, loc);
}
#if defined(__cpp_lib_span)
inline ChildResult run_child(std::span<const std::string> argv, const ChildOptions& options = {},
                             Location loc = Location::current()) noexcept {
  return c_abi::run_child(argv, options, loc);
}
#endif

// What to read of a child's output, and how long it may run.
struct Capture {
  bool out = true;   // its stdout (ChildOptions::stdout_fd is then ignored)
  bool err = false;  // its stderr
  std::chrono::milliseconds timeout{0};  // 0: none; past it SIGKILL, code 137
};

struct CapturedChild {
  ChildResult result;
  std::string out;
  std::string err;
  bool timed_out = false;
};

namespace c_abi {

template <typename Strings>
CapturedChild run_child_captured(const Strings& argv, const Capture& capture,
                                 const ChildOptions& options, Location loc) noexcept {
  CapturedChild captured;
  TRACE2D_CLIENT_TRY {
    std::vector<const char*> env;
    const trace2d_child_options o = child_options(options, env);
    const std::vector<trace2d_str> args = strs(argv);
    trace2d_child_capture c;
    (trace2d_child_capture_init)(&c);
    c.capture_stdout = capture.out ? 1 : 0;
    c.capture_stderr = capture.err ? 1 : 0;
    c.timeout_ms = milliseconds(capture.timeout);
    captured.result.code =
        (trace2d_run_child_capture_s)(loc.file_name(), loc.line(), args.data(), args.size(), &o, &c,
                                    &captured.result.pid, &captured.result.child_id);
    captured.timed_out = c.timed_out != 0;
    if (c.stdout_data != nullptr) {
      captured.out.assign(c.stdout_data, c.stdout_size);
    }
    if (c.stderr_data != nullptr) {
      captured.err.assign(c.stderr_data, c.stderr_size);
    }
    std::free(c.stdout_data);
    std::free(c.stderr_data);
  }
  TRACE2D_CLIENT_CATCH_ALL {
    // Out of memory: reported as a child not started (or its output lost).
  }
  return captured;
}

}  // namespace c_abi

// run_child with the child's stdout (and/or stderr) read into memory while
// it runs, without the deadlock of a pipe nobody reads past 64 KiB, and an
// optional timeout (see trace2d_run_child_capture_s).
inline CapturedChild run_child_captured(const std::vector<std::string>& argv,
                                        const Capture& capture = {},
                                        const ChildOptions& options = {},
                                        Location loc = Location::current()) noexcept {
  return c_abi::run_child_captured(argv, capture, options, loc);
}
inline CapturedChild run_child_captured(std::initializer_list<std::string_view> argv,
                                        const Capture& capture = {},
                                        const ChildOptions& options = {},
                                        Location loc = Location::current()) noexcept {
  return c_abi::run_child_captured(argv, capture, options, loc);
}

// Which streams of a child started by start_command() are pipes to the
// program (each replaces ChildOptions' descriptor for its stream).
struct Pipes {
  bool in = false;   // ChildProcess::in(): the program writes the child's stdin
  bool out = false;  // ChildProcess::out(): the program reads its stdout
  bool err = false;  // ChildProcess::err(): the program reads its stderr
};

// git's start_command()/finish_command(): a child that runs while the
// program does other work, stitched as run_child's (child_start when it
// starts, child_exit when it is finished). It owns its pipe ends.
// finish() closes in() (a child reading its input to the end waits for
// that) and waits; read out() and err() to their end first, or the child
// blocks once it has filled a pipe nobody reads (64 KiB), as with git's
// own; run_child_captured() reads both for you. The destructor finishes a
// child not finished yet, then closes the pipes. Movable, not copyable.
class ChildProcess {
 public:
  // A child that was never started (finished, code -1).
  ChildProcess() noexcept : m_loc(Location::current()) { clear(); }
  template <typename Strings>
  explicit ChildProcess(const Strings& argv, const Pipes& pipes = {},
                        const ChildOptions& options = {},
                        Location loc = Location::current()) noexcept
      : m_loc(loc) {
    start(argv, pipes, options);
  }
  explicit ChildProcess(std::initializer_list<std::string_view> argv, const Pipes& pipes = {},
                        const ChildOptions& options = {},
                        Location loc = Location::current()) noexcept
      : m_loc(loc) {
    start(argv, pipes, options);
  }
  ~ChildProcess() { end(); }
  ChildProcess(ChildProcess&& other) noexcept : m_c(other.m_c), m_loc(other.m_loc) {
    other.clear();
  }
  ChildProcess& operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
      end();
      m_c = other.m_c;
      m_loc = other.m_loc;
      other.clear();
    }
    return *this;
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // False when it could not be started (its child_exit, code -1, is sent).
  [[nodiscard]] bool started() const noexcept { return m_c.pid > 0; }
  [[nodiscard]] pid_t pid() const noexcept { return m_c.pid; }
  [[nodiscard]] int id() const noexcept { return m_c.child_id; }  // -1: tracing off
  // This process's pipe ends (close-on-exec); -1 when not asked for or closed.
  [[nodiscard]] int in() const noexcept { return m_c.stdin_fd; }
  [[nodiscard]] int out() const noexcept { return m_c.stdout_fd; }
  [[nodiscard]] int err() const noexcept { return m_c.stderr_fd; }
  // End of input for the child.
  void close_in() noexcept { close_fd(m_c.stdin_fd); }

  // Closes in(), waits for the child (past `timeout`, 0: none, it is killed
  // with SIGKILL: timed_out(), code 137), sends child_exit and returns
  // git's code. Once: later calls return the same code.
  int finish(std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
             Location loc = Location::current()) noexcept {
    close_in();
    return (trace2d_finish_command_fl)(loc.file_name(), loc.line(), &m_c,
                                       c_abi::milliseconds(timeout));
  }
  [[nodiscard]] bool finished() const noexcept { return m_c.finished != 0; }
  [[nodiscard]] int code() const noexcept { return m_c.code; }
  [[nodiscard]] bool timed_out() const noexcept { return m_c.timed_out != 0; }

 private:
  template <typename Strings>
  void start(const Strings& argv, const Pipes& pipes, const ChildOptions& options) noexcept {
    clear();
    TRACE2D_CLIENT_TRY {
      std::vector<const char*> env;
      const trace2d_child_options o = c_abi::child_options(options, env);
      const std::vector<trace2d_str> args = c_abi::strs(argv);
      (trace2d_child_process_init)(&m_c);
      m_c.pipe_stdin = pipes.in ? 1 : 0;
      m_c.pipe_stdout = pipes.out ? 1 : 0;
      m_c.pipe_stderr = pipes.err ? 1 : 0;
      (trace2d_start_command_s)(m_loc.file_name(), m_loc.line(), args.data(), args.size(), &o,
                                &m_c);
    }
    TRACE2D_CLIENT_CATCH_ALL {
      // Out of memory before anything ran: a child not started.
    }
  }
  // Not a started child: nothing to wait for, no descriptor (also the
  // moved-from state). Set here, not by the library, so that a ChildProcess
  // that is never started needs no library (TRACE2D_CLIENT_OFF).
  void clear() noexcept {
    m_c = trace2d_child_process{};
    m_c.struct_size = sizeof m_c;
    m_c.pid = -1;
    m_c.child_id = -1;
    m_c.stdin_fd = m_c.stdout_fd = m_c.stderr_fd = -1;
    m_c.finished = 1;
    m_c.code = -1;
  }
  void end() noexcept {
    if (m_c.finished == 0) {
      finish(std::chrono::milliseconds(0), m_loc);
    }
    close_fd(m_c.stdin_fd);
    close_fd(m_c.stdout_fd);
    close_fd(m_c.stderr_fd);
  }
  static void close_fd(int& fd) noexcept {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  }

  trace2d_child_process m_c{};
  Location m_loc;
};

// Starts argv as git's start_command() does (see ChildProcess); finish()
// it when the program needs its result. Runs it whether or not tracing is on.
inline ChildProcess start_command(const std::vector<std::string>& argv, const Pipes& pipes = {},
                                  const ChildOptions& options = {},
                                  Location loc = Location::current()) noexcept {
  return ChildProcess(argv, pipes, options, loc);
}
inline ChildProcess start_command(std::initializer_list<std::string_view> argv,
                                  const Pipes& pipes = {}, const ChildOptions& options = {},
                                  Location loc = Location::current()) noexcept {
  return ChildProcess(argv, pipes, options, loc);
}
#if defined(__cpp_lib_span)
inline ChildProcess start_command(std::span<const std::string> argv, const Pipes& pipes = {},
                                  const ChildOptions& options = {},
                                  Location loc = Location::current()) noexcept {
  return ChildProcess(argv, pipes, options, loc);
}
#endif

// Wraps a child the program starts itself: child_start now, child_exit on
// finish() (or with code -1 at scope exit when finish() was not called).
// Spawned with the inherited environment, the child already sees
// GIT_TRACE2_PARENT_SID (Options::export_environment); environment() is for
// programs that build their own.
class Child {
 public:
  template <typename Strings>
  explicit Child(const Strings& argv, const ChildOptions& options = {},
                 Location loc = Location::current()) noexcept
      : m_loc(loc) {
    TRACE2D_CLIENT_TRY {
      std::vector<const char*> env;
      const trace2d_child_options o = c_abi::child_options(options, env);
      const std::vector<trace2d_str> args = c_abi::strs(argv);
      m_id = (trace2d_child_start_s)(loc.file_name(), loc.line(), args.data(), args.size(), &o);
    }
    TRACE2D_CLIENT_CATCH_ALL {
      m_id = -1;  // out of memory: the child goes unreported, never the program
    }
  }
  explicit Child(std::initializer_list<std::string_view> argv, const ChildOptions& options = {},
                 Location loc = Location::current()) noexcept
      : Child(std::vector<std::string_view>(argv), options, loc) {}
  ~Child() {
    if (!m_finished) {
      finish(-1, -1, m_loc);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // pid 0 when unknown (std::system); code as git's (see child_code).
  void finish(pid_t pid, int code, Location loc = Location::current()) noexcept {
    m_finished = true;
    (trace2d_child_exit_fl)(loc.file_name(), loc.line(), m_id, pid, code);
  }
  [[nodiscard]] int id() const { return m_id; }

 private:
  int m_id = -1;
  bool m_finished = false;
  Location m_loc;
};

// A waitpid()/std::system() status as git's child code.
inline int child_code(int wait_status) noexcept { return (trace2d_child_code)(wait_status); }

// "GIT_TRACE2_PARENT_SID=...", "GIT_TRACE2_PARENT_NAME=..." (and the target
// when the program chose it) for a child; empty when tracing is off.
inline std::vector<std::string> child_environment() {
  std::vector<std::string> out;
  std::string buffer(256, '\0');
  std::size_t needed = (trace2d_child_environment)(&buffer[0], buffer.size());
  if (needed > buffer.size()) {
    buffer.assign(needed, '\0');
    needed = (trace2d_child_environment)(&buffer[0], buffer.size());
  }
  buffer.resize(needed <= buffer.size() ? needed : 0);
  // NUL-separated entries.
  for (std::size_t pos = 0; pos < buffer.size();) {
    const std::size_t end = buffer.find('\0', pos);
    const std::size_t stop = end == std::string::npos ? buffer.size() : end;
    if (stop > pos) {
      out.push_back(buffer.substr(pos, stop - pos));
    }
    pos = stop + 1;
  }
  return out;
}

}  // namespace v1
}  // namespace client
}  // namespace trace2d

#undef TRACE2D_CLIENT_TRY
#undef TRACE2D_CLIENT_CATCH_ALL

#endif  // TRACE2D_CLIENT_HPP
