// The C ABI (trace2d/client.h), the library's only exported interface (the
// C++ API of client.hpp is inline over it). Nothing may escape to a caller:
// every entry point catches everything.
#include <trace2d/client.h>

#include <algorithm>
#include <charconv>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client/src/child.hpp"
#include "client/src/clock.hpp"
#include "client/src/json_check.hpp"
#include "client/src/metrics.hpp"
#include "client/src/session.hpp"

namespace {

using trace2d::client::detail::Session;
using trace2d::client::detail::Where;

// Options structs may come from an older header: read a field only when
// the caller's struct_size covers it.
#define TRACE2D_HAS_FIELD(ptr, type, field) \
  ((ptr) != nullptr && (ptr)->struct_size >= offsetof(type, field) + sizeof((ptr)->field))

// trace2d_options as 1.0 had it: up to the field 1.1 added.
constexpr std::size_t k_options_1_0_size = offsetof(trace2d_options, version);

std::string_view text(const char* s) {
  return s == nullptr ? std::string_view() : std::string_view(s);
}

std::string_view text(trace2d_str s) {
  return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.size);
}

Where where_of(const char* file, int line) { return {text(file), line}; }

Session* active_session() noexcept {
  Session* s = Session::current();
  return s != nullptr && s->active() ? s : nullptr;
}

template <typename Action>
void guarded(Action&& action) noexcept {
  try {
    if (Session* s = active_session()) {
      action(*s);
    }
  } catch (...) {
    // Tracing never changes what the program does.
  }
}

std::string vformat(const char* fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) {
    return {};
  }
  std::string out(static_cast<std::size_t>(n) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), fmt, ap);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// A malloc()ed, NUL-terminated copy for a C caller to free().
char* malloc_copy(const std::string& bytes) noexcept {
  auto* copy = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (copy != nullptr) {
    std::memcpy(copy, bytes.data(), bytes.size());
    copy[bytes.size()] = '\0';
  }
  return copy;
}

std::vector<std::string_view> list(const char* const* items) {
  std::vector<std::string_view> out;
  for (; items != nullptr && *items != nullptr; ++items) {
    out.emplace_back(*items);
  }
  return out;
}

std::vector<std::string_view> list(const trace2d_str* items, std::size_t count) {
  std::vector<std::string_view> out;
  out.reserve(count);
  for (std::size_t i = 0; items != nullptr && i < count; ++i) {
    out.push_back(text(items[i]));
  }
  return out;
}

// A child's arguments, or none when they cannot be allocated: the child is
// then reported as one that could not be started.
std::vector<std::string_view> child_args(const char* const* argv) noexcept {
  try {
    return list(argv);
  } catch (...) {
    return {};
  }
}

std::vector<std::string_view> child_args(const trace2d_str* argv, std::size_t argc) noexcept {
  try {
    return list(argv, argc);
  } catch (...) {
    return {};
  }
}

trace2d::client::detail::ChildSpec spec_of(const trace2d_child_options* o) {
  trace2d::client::detail::ChildSpec spec;
  if (TRACE2D_HAS_FIELD(o, trace2d_child_options, use_shell)) {
    spec = {text(o->child_class), text(o->hook_name), text(o->cd), o->use_shell != 0};
  }
  return spec;
}

int define_metric(trace2d::client::detail::MetricKind kind, std::string_view category,
                  std::string_view name, int per_thread) noexcept {
  try {
    return trace2d::client::detail::MetricRegistry::instance().define(kind, category, name,
                                                                      per_thread != 0);
  } catch (...) {
    return -1;
  }
}

// The spawn request of both ABIs' argument forms. `env` keeps the extra
// environment's views alive while the request is used. Options from an
// older header that lacks the descriptors (0.1's) are read without them.
trace2d::client::detail::SpawnRequest spawn_request(std::span<const std::string_view> args,
                                                    const trace2d_child_options* options,
                                                    std::vector<std::string_view>& env) {
  trace2d::client::detail::SpawnRequest request{args, spec_of(options), {}, -1, -1, -1};
  if (TRACE2D_HAS_FIELD(options, trace2d_child_options, stderr_fd)) {
    env = list(options->env);
    request.extra_env = env;
    request.stdin_fd = options->stdin_fd;
    request.stdout_fd = options->stdout_fd;
    request.stderr_fd = options->stderr_fd;
  }
  return request;
}

void report_child(const trace2d::client::detail::ChildOutcome& outcome, pid_t* pid_out,
                  int* child_id_out) noexcept {
  if (pid_out != nullptr) {
    *pid_out = outcome.pid;
  }
  if (child_id_out != nullptr) {
    *child_id_out = outcome.child_id;
  }
}

// run_child for both ABIs' argument forms.
int run_child_with(std::span<const std::string_view> args, const char* file, int line,
                   const trace2d_child_options* options, pid_t* pid_out,
                   int* child_id_out) noexcept {
  trace2d::client::detail::ChildOutcome outcome;
  try {
    std::vector<std::string_view> env;
    outcome = trace2d::client::detail::run_child(spawn_request(args, options, env),
                                                 where_of(file, line));
  } catch (...) {
    outcome = {};
  }
  report_child(outcome, pid_out, child_id_out);
  return outcome.code;
}

// trace2d_start_command for both ABIs' argument forms.
int start_command_with(std::span<const std::string_view> args, const char* file, int line,
                       const trace2d_child_options* options,
                       trace2d_child_process* child) noexcept {
  if (!TRACE2D_HAS_FIELD(child, trace2d_child_process, timed_out)) {
    return -1;  // not set up by trace2d_child_process_init(): nothing to read or fill in
  }
  trace2d::client::detail::ChildOutcome outcome;
  trace2d::client::detail::PipeEnds ends;
  try {
    std::vector<std::string_view> env;
    outcome = trace2d::client::detail::start_command(
        spawn_request(args, options, env),
        {child->pipe_stdin != 0, child->pipe_stdout != 0, child->pipe_stderr != 0}, ends,
        where_of(file, line));
  } catch (...) {
    // Out of memory before the child ran: reported as a child not started.
  }
  child->pid = outcome.pid;
  child->child_id = outcome.child_id;
  child->stdin_fd = ends.in;
  child->stdout_fd = ends.out;
  child->stderr_fd = ends.err;
  child->finished = outcome.pid > 0 ? 0 : 1;
  child->code = -1;
  child->timed_out = 0;
  return outcome.pid > 0 ? 0 : -1;
}

// A number's data event: std::to_chars gives an integer in full and a
// double as the shortest text that reads back as the same value ("0.93",
// "1e-09", "nan", "inf"), never a rounding of it, and allocates nothing.
template <typename Number>
void data_number(const char* file, int line, std::string_view category, int repo,
                 std::string_view key, Number value) noexcept {
  guarded([&](Session& s) {
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    s.data(category, key, std::string_view(buffer, static_cast<std::size_t>(result.ptr - buffer)),
           repo, where_of(file, line));
  });
}

void data_bool(const char* file, int line, std::string_view category, int repo,
               std::string_view key, int value) noexcept {
  guarded([&](Session& s) {
    s.data(category, key, value != 0 ? "true" : "false", repo, where_of(file, line));
  });
}

// The JSON is checked with tracing off too: a program's own tests then
// find the bad JSON it would send in production.
int data_json_of(const char* file, int line, std::string_view category, int repo,
                 std::string_view key, std::string_view json) noexcept {
  try {
    Session* s = active_session();
    if (s == nullptr) {
      return trace2d::client::detail::is_json_value(json) ? 1 : 0;
    }
    return s->data_json(category, key, json, repo, where_of(file, line)) ? 1 : 0;
  } catch (...) {
    return 1;  // not a verdict on the JSON: the event was lost to an allocation
  }
}

#define TRACE2D_STRINGIFY2(x) #x
#define TRACE2D_STRINGIFY(x) TRACE2D_STRINGIFY2(x)


}  // namespace

extern "C" {

// The function the header's trace2d_options_init() macro hides (hence the
// parentheses): what programs built against 1.0 call, with room for 1.0's
// fields only. Writing 1.1's (sizeof trace2d_options) would overrun their
// struct.
void(trace2d_options_init)(trace2d_options* options) {
  trace2d_options_init_size(options, k_options_1_0_size);
}

void trace2d_options_init_size(trace2d_options* options, size_t size) {
  if (options == nullptr || size < sizeof options->struct_size) {
    return;
  }
  if (size < k_options_1_0_size) {
    // No room for the fields every version has: zeroed, so that start()
    // refuses it (struct_size 0) instead of reading what was there.
    std::memset(static_cast<void*>(options), 0, size);
    return;
  }
  trace2d_options defaults{};
  defaults.struct_size = std::min(size, sizeof defaults);
  defaults.queue_bytes = std::size_t{1} << 20;
  defaults.exit_flush_ms = 150;
  defaults.export_environment = 1;
  defaults.signal_events = 1;
  // The caller's whole struct is zeroed (a later header's fields too: NULL
  // and 0 mean "not set"), then the fields this library knows are set, as
  // far as the caller's size holds them.
  std::memset(static_cast<void*>(options), 0, size);
  std::memcpy(static_cast<void*>(options), &defaults, defaults.struct_size);
}

int trace2d_start_fl(const char* file, int line, int argc, const char* const* argv,
                     const trace2d_options* options) {
  try {
    trace2d::client::detail::Config config;
    if (options != nullptr && !TRACE2D_HAS_FIELD(options, trace2d_options, signal_events)) {
      // Not set up by trace2d_options_init(): its fields cannot be trusted,
      // and ignoring them silently would trace somewhere else than asked.
      Session::note_refusal("options not initialised by trace2d_options_init()");
      return 0;
    }
    if (options != nullptr) {
      config.target = text(options->target);
      config.exe = text(options->exe);
      if (TRACE2D_HAS_FIELD(options, trace2d_options, version)) {
        config.version = text(options->version);  // a 1.0 struct ends before it
      }
      config.cmd_name = text(options->cmd_name);
      config.queue_bytes = options->queue_bytes;
      config.exit_flush_timeout = std::chrono::milliseconds(options->exit_flush_ms);
      config.export_environment = options->export_environment != 0;
      config.signal_events = options->signal_events != 0;
    }
    std::vector<std::string_view> args;
    for (int i = 0; argv != nullptr && i < argc && argv[i] != nullptr; ++i) {
      args.emplace_back(argv[i]);
    }
    return Session::start(args, config, where_of(file, line)) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

unsigned trace2d_version(void) { return TRACE2D_CLIENT_VERSION; }

const char* trace2d_version_string(void) {
  return TRACE2D_STRINGIFY(TRACE2D_CLIENT_VERSION_MAJOR) "." TRACE2D_STRINGIFY(
      TRACE2D_CLIENT_VERSION_MINOR) "." TRACE2D_STRINGIFY(TRACE2D_CLIENT_VERSION_PATCH);
}

int trace2d_enabled(void) { return active_session() != nullptr ? 1 : 0; }

const char* trace2d_off_reason(void) { return Session::off_reason(); }

uint64_t trace2d_dropped(void) {
  Session* s = Session::current();
  return s == nullptr ? 0 : s->dropped();
}

const char* trace2d_sid(void) {
  // Also after shutdown() or a failed target: the session keeps its SID.
  Session* s = Session::current();
  return s == nullptr ? "" : s->sid().c_str();
}

int trace2d_exit_fl(const char* file, int line, int code) {
  guarded([&](Session& s) { s.record_exit(code, where_of(file, line)); });
  return code;
}

int trace2d_flush(unsigned timeout_ms) {
  Session* s = active_session();
  return s == nullptr || s->flush(std::chrono::milliseconds(timeout_ms)) ? 1 : 0;
}

int trace2d_shutdown_fl(const char* file, int line, int code, unsigned timeout_ms) {
  int complete = 0;
  guarded([&](Session& s) {
    complete = s.shutdown(code, where_of(file, line), std::chrono::milliseconds(timeout_ms)) ? 1 : 0;
  });
  return complete;
}

int trace2d_exec_fl(const char* file, int line, const char* exe, const char* const* argv) {
  int id = -1;
  guarded([&](Session& s) { id = s.exec(text(exe), list(argv), where_of(file, line)); });
  return id;
}

void trace2d_exec_result_fl(const char* file, int line, int exec_id, int code) {
  guarded([&](Session& s) { s.exec_result(exec_id, code, where_of(file, line)); });
}

int trace2d_execvp_fl(const char* file, int line, const char* program, const char* const* argv) {
  return trace2d::client::detail::exec_program(program, argv, where_of(file, line));
}

void trace2d_cmd_name_fl(const char* file, int line, const char* name) {
  guarded([&](Session& s) { s.cmd_name(text(name), where_of(file, line)); });
}

void trace2d_cmd_mode_fl(const char* file, int line, const char* mode) {
  guarded([&](Session& s) { s.cmd_mode(text(mode), where_of(file, line)); });
}

void trace2d_def_param_fl(const char* file, int line, const char* param, const char* value,
                          const char* scope) {
  guarded([&](Session& s) {
    std::optional<std::string_view> v;
    if (value != nullptr) {
      v = value;
    }
    s.def_param(text(param), v, text(scope), where_of(file, line));
  });
}

void trace2d_def_repo_fl(const char* file, int line, int repo, const char* worktree) {
  guarded([&](Session& s) { s.def_repo(repo, text(worktree), where_of(file, line)); });
}

void trace2d_region_enter_fl(const char* file, int line, const char* category, const char* label,
                             int repo, const char* msg) {
  guarded([&](Session& s) {
    s.region_enter(text(category), text(label), text(msg), repo, where_of(file, line));
  });
}

void trace2d_region_leave_fl(const char* file, int line, const char* category, const char* label,
                             int repo, const char* msg) {
  guarded([&](Session& s) {
    s.region_leave(text(category), text(label), text(msg), repo, where_of(file, line));
  });
}

void trace2d_data_string_fl(const char* file, int line, const char* category, int repo,
                            const char* key, const char* value) {
  guarded([&](Session& s) {
    s.data(text(category), text(key), text(value), repo, where_of(file, line));
  });
}

void trace2d_data_intmax_fl(const char* file, int line, const char* category, int repo,
                            const char* key, intmax_t value) {
  data_number(file, line, text(category), repo, text(key), value);
}

int trace2d_data_json_fl(const char* file, int line, const char* category, int repo,
                         const char* key, const char* json) {
  return data_json_of(file, line, text(category), repo, text(key), text(json));
}

void trace2d_error_fl(const char* file, int line, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  guarded([&](Session& s) {
    // As git: msg is the formatted text, present only with a format.
    const std::string msg = fmt != nullptr && *fmt != '\0' ? vformat(fmt, ap) : std::string();
    s.error(msg, text(fmt), where_of(file, line));
  });
  va_end(ap);
}

void trace2d_printf_fl(const char* file, int line, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  guarded([&](Session& s) {
    const std::string msg = fmt != nullptr && *fmt != '\0' ? vformat(fmt, ap) : std::string();
    s.printf(msg, where_of(file, line));
  });
  va_end(ap);
}

void trace2d_thread_start_fl(const char* file, int line, const char* name) {
  guarded([&](Session& s) { (void)s.thread_start(text(name), where_of(file, line)); });
}

void trace2d_thread_exit_fl(const char* file, int line) {
  try {
    // Also after the session ended: the thread's context is released.
    if (Session* s = Session::current()) {
      s->thread_exit(s->current_thread_scope(), where_of(file, line));
    }
  } catch (...) {
    // Tracing never changes what the program does.
  }
}

int trace2d_timer_define(const char* category, const char* name, int per_thread) {
  return define_metric(trace2d::client::detail::MetricKind::timer, text(category), text(name),
                       per_thread);
}

void trace2d_timer_start(int timer_id) {
  guarded([&](Session& s) { s.timer_start(timer_id); });
}

void trace2d_timer_stop(int timer_id) {
  guarded([&](Session& s) { s.timer_stop(timer_id); });
}

int trace2d_counter_define(const char* category, const char* name, int per_thread) {
  return define_metric(trace2d::client::detail::MetricKind::counter, text(category), text(name),
                       per_thread);
}

void trace2d_counter_add(int counter_id, int64_t value) {
  guarded([&](Session& s) { s.counter_add(counter_id, value); });
}

void trace2d_child_options_init(trace2d_child_options* options) {
  if (options != nullptr) {
    *options = trace2d_child_options{};
    options->struct_size = sizeof *options;
    options->stdin_fd = -1;
    options->stdout_fd = -1;
    options->stderr_fd = -1;
  }
}

int trace2d_run_child_fl(const char* file, int line, const char* const* argv,
                         const trace2d_child_options* options, pid_t* pid_out) {
  return run_child_with(child_args(argv), file, line, options, pid_out, nullptr);
}

int trace2d_child_start_fl(const char* file, int line, const char* const* argv,
                           const trace2d_child_options* options) {
  int id = -1;
  guarded(
      [&](Session& s) { id = s.child_start(list(argv), spec_of(options), where_of(file, line)); });
  return id;
}

void trace2d_child_exit_fl(const char* file, int line, int child_id, pid_t pid, int code) {
  guarded([&](Session& s) { s.child_exit(child_id, pid, code, where_of(file, line)); });
}

int trace2d_child_code(int wait_status) { return trace2d::client::detail::child_code(wait_status); }

size_t trace2d_child_environment(char* buffer, size_t size) {
  std::size_t needed = 0;
  guarded([&](Session& s) {
    std::string all;
    for (const std::string& entry : s.child_environment()) {
      all.append(entry).push_back('\0');
    }
    needed = all.size();
    if (buffer != nullptr && needed <= size) {
      all.copy(buffer, needed);
    }
  });
  return needed;
}

// ---- Sized strings -------------------------------------------------------

void trace2d_cmd_name_s(const char* file, int line, trace2d_str name) {
  guarded([&](Session& s) { s.cmd_name(text(name), where_of(file, line)); });
}

void trace2d_cmd_mode_s(const char* file, int line, trace2d_str mode) {
  guarded([&](Session& s) { s.cmd_mode(text(mode), where_of(file, line)); });
}

void trace2d_def_param_s(const char* file, int line, trace2d_str param, trace2d_str value,
                         trace2d_str scope) {
  guarded([&](Session& s) {
    std::optional<std::string_view> v;
    if (value.data != nullptr) {
      v = text(value);
    }
    s.def_param(text(param), v, text(scope), where_of(file, line));
  });
}

void trace2d_def_repo_s(const char* file, int line, int repo, trace2d_str worktree) {
  guarded([&](Session& s) { s.def_repo(repo, text(worktree), where_of(file, line)); });
}

int trace2d_region_enter_s(const char* file, int line, trace2d_str category, trace2d_str label,
                           int repo, trace2d_str msg) {
  int entered = 0;
  guarded([&](Session& s) {
    s.region_enter(text(category), text(label), text(msg), repo, where_of(file, line));
    entered = 1;
  });
  return entered;
}

void trace2d_region_leave_s(const char* file, int line, trace2d_str category, trace2d_str label,
                            int repo, trace2d_str msg) {
  guarded([&](Session& s) {
    s.region_leave(text(category), text(label), text(msg), repo, where_of(file, line));
  });
}

void trace2d_region_leave_innermost_fl(const char* file, int line, int repo) {
  try {
    // Also after the session ended: the thread's region stack stays right.
    if (Session* s = Session::current()) {
      s->region_leave_innermost(repo, where_of(file, line));
    }
  } catch (...) {
    // Tracing never changes what the program does.
  }
}

void trace2d_data_string_s(const char* file, int line, trace2d_str category, int repo,
                           trace2d_str key, trace2d_str value) {
  guarded([&](Session& s) {
    s.data(text(category), text(key), text(value), repo, where_of(file, line));
  });
}

void trace2d_data_intmax_s(const char* file, int line, trace2d_str category, int repo,
                           trace2d_str key, intmax_t value) {
  data_number(file, line, text(category), repo, text(key), value);
}

int trace2d_data_json_s(const char* file, int line, trace2d_str category, int repo,
                        trace2d_str key, trace2d_str json) {
  return data_json_of(file, line, text(category), repo, text(key), text(json));
}

void trace2d_error_s(const char* file, int line, trace2d_str msg, trace2d_str fmt) {
  guarded([&](Session& s) { s.error(text(msg), text(fmt), where_of(file, line)); });
}

void trace2d_printf_s(const char* file, int line, trace2d_str msg) {
  guarded([&](Session& s) { s.printf(text(msg), where_of(file, line)); });
}

void trace2d_thread_start_s(const char* file, int line, trace2d_str name) {
  guarded([&](Session& s) { (void)s.thread_start(text(name), where_of(file, line)); });
}

int trace2d_timer_define_s(trace2d_str category, trace2d_str name, int per_thread) {
  return define_metric(trace2d::client::detail::MetricKind::timer, text(category), text(name),
                       per_thread);
}

int trace2d_counter_define_s(trace2d_str category, trace2d_str name, int per_thread) {
  return define_metric(trace2d::client::detail::MetricKind::counter, text(category), text(name),
                       per_thread);
}

int trace2d_child_start_s(const char* file, int line, const trace2d_str* argv, size_t argc,
                          const trace2d_child_options* options) {
  int id = -1;
  guarded([&](Session& s) {
    id = s.child_start(list(argv, argc), spec_of(options), where_of(file, line));
  });
  return id;
}

int trace2d_run_child_s(const char* file, int line, const trace2d_str* argv, size_t argc,
                        const trace2d_child_options* options, pid_t* pid_out, int* child_id_out) {
  return run_child_with(child_args(argv, argc), file, line, options, pid_out, child_id_out);
}

// ---- 1.1 -----------------------------------------------------------------

uint64_t trace2d_region_enter_token_s(const char* file, int line, trace2d_str category,
                                      trace2d_str label, int repo, trace2d_str msg) {
  std::uint64_t token = 0;
  guarded([&](Session& s) {
    token = s.region_enter(text(category), text(label), text(msg), repo, where_of(file, line));
  });
  return token;
}

uint64_t trace2d_region_enter_token_fl(const char* file, int line, const char* category,
                                       const char* label, int repo, const char* msg) {
  std::uint64_t token = 0;
  guarded([&](Session& s) {
    token = s.region_enter(text(category), text(label), text(msg), repo, where_of(file, line));
  });
  return token;
}

void trace2d_region_leave_token_fl(const char* file, int line, uint64_t token, int repo) {
  if (token == 0) {
    return;
  }
  guarded([&](Session& s) { s.region_leave_token(token, repo, where_of(file, line)); });
}

void trace2d_data_double_s(const char* file, int line, trace2d_str category, int repo,
                           trace2d_str key, double value) {
  data_number(file, line, text(category), repo, text(key), value);
}

void trace2d_data_double_fl(const char* file, int line, const char* category, int repo,
                            const char* key, double value) {
  data_number(file, line, text(category), repo, text(key), value);
}

void trace2d_data_bool_s(const char* file, int line, trace2d_str category, int repo,
                         trace2d_str key, int value) {
  data_bool(file, line, text(category), repo, text(key), value);
}

void trace2d_data_bool_fl(const char* file, int line, const char* category, int repo,
                          const char* key, int value) {
  data_bool(file, line, text(category), repo, text(key), value);
}

void trace2d_data_uintmax_s(const char* file, int line, trace2d_str category, int repo,
                            trace2d_str key, uintmax_t value) {
  data_number(file, line, text(category), repo, text(key), value);
}

void trace2d_data_uintmax_fl(const char* file, int line, const char* category, int repo,
                             const char* key, uintmax_t value) {
  data_number(file, line, text(category), repo, text(key), value);
}

void trace2d_child_capture_init(trace2d_child_capture* capture) {
  if (capture != nullptr) {
    *capture = trace2d_child_capture{};
    capture->struct_size = sizeof *capture;
  }
}

int trace2d_run_child_capture_s(const char* file, int line, const trace2d_str* argv, size_t argc,
                                const trace2d_child_options* options,
                                trace2d_child_capture* capture, pid_t* pid_out,
                                int* child_id_out) {
  trace2d::client::detail::ChildOutcome outcome;
  trace2d::client::detail::CapturedOutput output;
  const bool usable = TRACE2D_HAS_FIELD(capture, trace2d_child_capture, timed_out);
  try {
    const std::vector<std::string_view> args = list(argv, argc);
    std::vector<std::string_view> env;
    trace2d::client::detail::CaptureRequest wanted;
    if (usable) {
      wanted = {capture->capture_stdout != 0, capture->capture_stderr != 0,
                static_cast<std::int64_t>(capture->timeout_ms)};
    }
    outcome = trace2d::client::detail::run_child_captured(spawn_request(args, options, env), wanted,
                                                          output, where_of(file, line));
    if (usable) {
      capture->stdout_data = wanted.out ? malloc_copy(output.out) : nullptr;
      capture->stdout_size = capture->stdout_data != nullptr ? output.out.size() : 0;
      capture->stderr_data = wanted.err ? malloc_copy(output.err) : nullptr;
      capture->stderr_size = capture->stderr_data != nullptr ? output.err.size() : 0;
      capture->timed_out = output.timed_out ? 1 : 0;
    }
  } catch (...) {
    // Out of memory before the child ran: reported as a child not started.
  }
  report_child(outcome, pid_out, child_id_out);
  return outcome.code;
}

void trace2d_child_process_init(trace2d_child_process* child) {
  if (child != nullptr) {
    *child = trace2d_child_process{};
    child->struct_size = sizeof *child;
    child->pid = -1;
    child->child_id = -1;
    child->stdin_fd = -1;
    child->stdout_fd = -1;
    child->stderr_fd = -1;
    child->code = -1;
  }
}

int trace2d_start_command_s(const char* file, int line, const trace2d_str* argv, size_t argc,
                            const trace2d_child_options* options, trace2d_child_process* child) {
  return start_command_with(child_args(argv, argc), file, line, options, child);
}

int trace2d_start_command_fl(const char* file, int line, const char* const* argv,
                             const trace2d_child_options* options, trace2d_child_process* child) {
  return start_command_with(child_args(argv), file, line, options, child);
}

int trace2d_finish_command_fl(const char* file, int line, trace2d_child_process* child,
                              unsigned timeout_ms) {
  if (!TRACE2D_HAS_FIELD(child, trace2d_child_process, timed_out)) {
    return -1;
  }
  if (child->finished != 0) {
    // Waiting again could reap an unrelated child that got the same pid.
    return child->code;
  }
  const std::int64_t deadline_us =
      timeout_ms > 0 ? trace2d::client::detail::mono_us() + std::int64_t{timeout_ms} * 1000 : 0;
  bool timed_out = false;
  child->code = trace2d::client::detail::finish_command({child->child_id, child->pid, -1},
                                                        deadline_us, timed_out,
                                                        where_of(file, line));
  child->finished = 1;
  child->timed_out = timed_out ? 1 : 0;
  return child->code;
}

char* trace2d_memory_take(size_t* size_out) {
  if (size_out != nullptr) {
    *size_out = 0;
  }
  try {
    Session* s = Session::current();
    if (s == nullptr) {
      return nullptr;
    }
    const std::string events = s->take_memory(std::chrono::seconds(1));
    char* copy = malloc_copy(events);
    if (copy != nullptr && size_out != nullptr) {
      *size_out = events.size();
    }
    return copy;
  } catch (...) {
    return nullptr;
  }
}

uint64_t trace2d_dropped_by(int reason) {
  Session* s = Session::current();
  if (s == nullptr) {
    return 0;
  }
  switch (reason) {
    case TRACE2D_DROP_QUEUE_FULL: return s->dropped_queue_full();
    case TRACE2D_DROP_TARGET: return s->dropped_target();
    case TRACE2D_DROP_NESTING: return s->dropped_nesting();
    default: return 0;
  }
}

}  // extern "C"
