#include "client/src/session.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "client/src/clock.hpp"
#include "client/src/destination.hpp"
#include "client/src/session_id.hpp"
#include "proto/json_quote.hpp"

namespace trace2d::client::detail {
namespace {

// The pid that started a session: once per process, again after a fork.
std::atomic<pid_t> g_started_pid{0};
// t_abs counts from when the library was loaded, i.e. about process start.
const std::int64_t g_load_us = mono_us();
const pid_t g_load_pid = ::getpid();
// Sessions a forked child dropped, still referenced so that leak checkers
// (LeakSanitizer) see them as reachable: they are left alone on purpose.
Session* g_abandoned = nullptr;
// Why the last start() left tracing off; written only by start(), which
// runs once per process (the main thread, early), so read without a lock.
std::string g_start_refusal = "trace2d_start() was not called";

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The longest ancestry walked: a bound for a chain that should end at pid
// 1 anyway (its ppid is 0).
constexpr int k_max_ancestry = 64;

// How long start() waits for its opening lines to be written (see start()).
constexpr std::chrono::milliseconds k_opening_flush_timeout(20);

// git's cmd_ancestry on Linux (its compat/linux/procinfo.c): the command
// names of this process's ancestors, its parent first, each as
// /proc/<pid>/stat gives it in parentheses (the kernel's comm, at most 15
// bytes), following each one's parent pid until it is 0 or a process
// cannot be read. Empty where there is no /proc (git then sends nothing).
std::vector<std::string> process_ancestry() {
  std::vector<std::string> names;
  pid_t pid = ::getppid();
  for (int depth = 0; pid > 0 && depth < k_max_ancestry; ++depth) {
    char path[32];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      break;
    }
    // "pid (comm) state ppid ...": the fields wanted fit in the first bytes.
    char buffer[256];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    ::close(fd);
    const std::string_view stat(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
    // The last ')': a command name may hold parentheses itself.
    const std::size_t open = stat.find('(');
    const std::size_t close = stat.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
        close + 4 >= stat.size()) {
      break;
    }
    names.emplace_back(stat.substr(open + 1, close - open - 1));
    const std::string_view rest = stat.substr(close + 4);  // past ") S "
    int parent = 0;
    if (std::from_chars(rest.data(), rest.data() + rest.size(), parent).ec != std::errc()) {
      break;
    }
    pid = parent;
  }
  return names;
}

void write_stderr(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n <= 0) {
      return;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void finish_session_at_exit(std::optional<int> status) {
  Session* s = Session::current();
  if (s != nullptr && s->pid() == ::getpid()) {
    try {
      s->finish_at_exit(status);
    } catch (...) {
      // exit must go on whatever happens here
    }
  }
}

#if defined(__GLIBC__)
// glibc's on_exit() hands its handlers the status given to exit() (also a
// return from main), so the exit events carry the true code even when the
// program never called the library's exit. Masked as the kernel (and git)
// do: exit(256) is seen as 0 by the parent.
void on_exit_handler(int status, void* /*unused*/) { finish_session_at_exit(status & 0xff); }
#else
void at_exit_handler() { finish_session_at_exit(std::nullopt); }
#endif

void at_fork_prepare() {
  if (Session* s = Session::current()) {
    s->hold_writer_for_fork();
  }
}

void at_fork_parent() {
  if (Session* s = Session::current()) {
    s->release_writer_after_fork();
  }
}

// In the child of fork(): tracing is off. The parent's session is dropped
// unused (its mutexes may be held, its writer thread is not here); start()
// may begin a fresh session, a child of the parent's.
void at_fork_child() {
  if (Session* s = Session::forget_current()) {
    s->abandon_in_child(g_abandoned);
    g_abandoned = s;
  }
}

void on_thread_end(ThreadContext& ctx) {
  Session* s = Session::current();
  if (s != nullptr && ctx.session == s) {
    s->end_thread(ctx, {k_internal_file, __LINE__});
  }
}

// A session's number, carried by its region tokens: a guard made before a
// fork() and destroyed in the child must not close the child session's
// region that happens to have the same serial.
std::uint8_t next_generation() {
  static std::atomic<unsigned> counter{0};
  return static_cast<std::uint8_t>(counter.fetch_add(1) + 1);
}

void install_process_hooks_once() {
  static bool installed = false;  // copied into a forked child: hooks are inherited too
  if (!installed) {
    installed = true;
#if defined(__GLIBC__)
    ::on_exit(on_exit_handler, nullptr);
#else
    std::atexit(at_exit_handler);
#endif
    pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
    set_thread_exit_callback(on_thread_end);
  }
}

}  // namespace

Session::Session(Config config, std::string sid, std::unique_ptr<Sink> sink)
    : m_config(std::move(config)),
      m_sid(std::move(sid)),
      m_pid(::getpid()),
      m_start_us(m_pid == g_load_pid ? g_load_us : mono_us()),
      m_generation(next_generation()) {
  m_sid_json = ",\"sid\":";
  proto::append_json_quoted(m_sid_json, m_sid);
  m_brief = parse_git_bool(env("GIT_TRACE2_EVENT_BRIEF")).value_or(false);
  const int nesting = std::atoi(env("GIT_TRACE2_EVENT_NESTING").c_str());
  if (nesting > 0) {
    m_max_nesting = static_cast<std::size_t>(nesting);
  }
  m_parent_name = env("GIT_TRACE2_PARENT_NAME");
  m_writer = std::make_unique<Writer>(std::move(sink), m_config.queue_bytes);
  auto main = std::make_unique<ThreadContext>(*this, 0, "main", m_start_us);
  m_main = main.get();
  m_threads.push_back(std::move(main));
}


const char* Session::off_reason() noexcept {
  const Session* s = current();
  if (s == nullptr) {
    return g_abandoned != nullptr && g_started_pid.load() != ::getpid()
               ? "a forked child: its parent's session is not continued (call trace2d_start())"
               : g_start_refusal.c_str();
  }
  if (s->active()) {
    return "";
  }
  return s->m_finished.load() ? "the session ended (exit, shutdown)"
                              : "the target failed (a write error): tracing stopped, as git does";
}

void Session::note_refusal(const char* reason) { g_start_refusal = reason; }

bool Session::start(std::span<const std::string_view> argv, const Config& config, Where where) {
  const pid_t pid = ::getpid();
  pid_t previous = g_started_pid.load();
  if (previous == pid || !g_started_pid.compare_exchange_strong(previous, pid)) {
    const Session* running = current();
    return running != nullptr && running->active();  // started before: say whether it runs
  }
  const std::string env_target = env("GIT_TRACE2_EVENT");
  const std::string target = config.target.empty() ? env_target : config.target;
  if (target.empty()) {
    g_start_refusal = "no target: GIT_TRACE2_EVENT is unset or empty and the program gave none";
    return false;
  }
  const std::string sid =
      make_sid(env("GIT_TRACE2_PARENT_SID"), sid_component(real_us(), pid, host_component()));
  const std::string max_files = env("GIT_TRACE2_MAX_FILES");
  const bool debug = parse_git_bool(env("GIT_TRACE2_DST_DEBUG")).value_or(false);
  // Always in debug mode, to know why; but stderr gets only what git would
  // print: everything with GIT_TRACE2_DST_DEBUG, else the unknown-value
  // warning alone.
  TargetSettings settings{target, sid, true, max_files};
  std::string why;
  Destination destination = open_destination(settings, why);
  if (debug) {
    write_stderr(why);
  } else if (why.find("unknown value for") != std::string::npos) {
    write_stderr(why.substr(0, why.find('\n') + 1));
  }
  if (destination.kind == SinkKind::none) {
    if (!why.empty()) {
      g_start_refusal = why.substr(0, why.find_last_not_of('\n') + 1);
    } else if (parse_git_bool(target) == false) {
      // Off on purpose, as git reads "0" and "false": nothing failed.
      g_start_refusal = "tracing is off: the target is '" + target + "', which git reads as false";
    } else {
      g_start_refusal = "the target could not be opened: " + target;
    }
    return false;
  }
  auto sink = std::make_unique<Sink>(destination);
  const bool too_many_files = sink->too_many_files();
  auto session = std::make_unique<Session>(config, sid, std::move(sink));
  if (too_many_files) {
    // git writes these two into the sentinel file, then nothing more.
    session->emit_version_and_start(argv, where, false);
    LineBuilder b(session->m_main->line);
    b.begin("too_many_files", session->common(*session->m_main), where);
    b.end();
    session->push(session->m_main->line);
    g_start_refusal = "too many files in the target directory (GIT_TRACE2_MAX_FILES): "
                      "version and too_many_files went to git-trace2-discard";
    return false;  // the session's destructor flushes
  }
  if (config.export_environment) {
    ::setenv("GIT_TRACE2_PARENT_SID", sid.c_str(), 1);
  }
  if (!config.target.empty() && env_target.empty()) {
    // The program chose the target: its children need it to be traced.
    // A memory target is this process's alone: its children trace as the
    // environment says.
    if (config.target != k_memory_target) {
      session->m_target_for_children = config.target;
    }
    if (config.export_environment) {
      ::setenv("GIT_TRACE2_EVENT", config.target.c_str(), 1);
    }
  }
  current_context() = session->m_main;
  session->emit_version_and_start(argv, where, true);
  Session* published = session.release();  // immortal: see the header
  s_current.store(published, std::memory_order_release);
  install_process_hooks_once();
  if (config.signal_events) {
    install_fatal_signal_handlers();
  }
  published->cmd_name(!config.cmd_name.empty() ? std::string_view(config.cmd_name)
                      : argv.empty()           ? std::string_view("unknown")
                                               : base_name(argv[0]),
                      where);
  // The opening lines are handed over before start() returns, as git
  // writes its own: a program killed (SIGKILL, _exit()) before the writer
  // thread ran left no session at all, where the README promises one
  // stored incomplete. The connection is fresh, so this takes microseconds;
  // the bound is for a collector that stopped accepting.
  (void)published->m_writer->flush(k_opening_flush_timeout);
  return true;
}

void Session::emit_version_and_start(std::span<const std::string_view> argv, Where where,
                                     bool with_start) {
  ThreadContext& ctx = *m_main;
  // git puts its version in version.exe; a program that gives its own is
  // sent the same way (trace2d stores it as sessions.exe), else what 1.0
  // sent: the exe it named, or its name.
  const std::string_view exe = !m_config.version.empty() ? std::string_view(m_config.version)
                               : !m_config.exe.empty()   ? std::string_view(m_config.exe)
                               : argv.empty()            ? std::string_view("unknown")
                                                         : base_name(argv[0]);
  {
    LineBuilder b(ctx.line);
    b.begin("version", common(ctx), where, 0, true);
    b.string("evt", "4");
    b.string("exe", exe);
    b.end();
    push(ctx.line);
  }
  if (!with_start) {
    return;
  }
  {
    LineBuilder b(ctx.line);
    b.begin("start", common(ctx), where);
    b.seconds("t_abs", mono_us() - m_start_us);
    b.strings("argv", argv);
    b.end();
    push(ctx.line);
  }
  // As git sends it after start (trace2_collect_process_info at startup),
  // from the library's own code as git's comes from its procinfo.c.
  const std::vector<std::string> ancestry = process_ancestry();
  if (!ancestry.empty()) {
    LineBuilder b(ctx.line);
    b.begin("cmd_ancestry", common(ctx), {k_internal_file, __LINE__});
    b.strings("ancestry", ancestry);
    b.end();
    push(ctx.line);
  }
}

std::string Session::format_exit_line(const ThreadContext& ctx, std::string_view event, int code,
                                      Where where) const {
  return format_exit_line(common(ctx), event, code, where);
}

std::string Session::format_exit_line(const CommonFields& fields, std::string_view event, int code,
                                      Where where) const {
  std::string line;
  LineBuilder b(line);
  b.begin(event, fields, where, 0, event == "atexit");
  b.seconds("t_abs", mono_us() - m_start_us);
  b.integer("code", code);
  b.end();
  return line;
}

void Session::record_exit(int code, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || m_finished.load()) {
    return;
  }
  // Only what the exit event needs is kept; it is formatted when the
  // session ends, so that its time follows the region_leave events of the
  // guards still alive at `return exit(code)` (1.0 sent it with the time
  // of this call, before them).
  std::string file(where.file());
  std::string thread_json = ctx->thread_json;
  std::lock_guard lock(m_mutex);
  m_exit_code = code;
  m_exit_recorded = true;
  m_exit_file = std::move(file);
  m_exit_line_number = where.line;
  m_exit_thread_json = std::move(thread_json);
}

std::string Session::final_head(std::string exit_line) {
  append_thread_metrics(exit_line, *m_main);
  append_total_metrics(exit_line);
  return exit_line;
}

std::string Session::final_tail(int code, std::uint64_t dropped) const {
  std::string out;
  if (dropped > 0) {
    LineBuilder b(out);
    b.begin("data", common(*m_main), {k_internal_file, __LINE__});
    const std::int64_t t_abs = mono_us() - m_start_us;
    b.seconds("t_abs", t_abs);
    b.seconds("t_rel", t_abs);
    b.integer("nesting", 1);
    b.string("category", "trace2d");
    b.string("key", "dropped_events");
    b.string("value", std::to_string(dropped));
    b.end();
  }
  out += format_exit_line(*m_main, "atexit", code, {k_internal_file, __LINE__});
  return out;
}

void Session::finish_at_exit(std::optional<int> status) {
  finish(status, {k_internal_file, __LINE__}, m_config.exit_flush_timeout, Writer::Patience::while_taken);
}

bool Session::shutdown(int code, Where where, std::chrono::milliseconds timeout) {
  return finish(code, where, timeout, Writer::Patience::timeout);
}

bool Session::finish(std::optional<int> code_given, Where where, std::chrono::milliseconds timeout,
                     Writer::Patience patience) {
  if (m_finished.exchange(true)) {
    return false;
  }
  std::string exit_line;
  int code = k_unknown_exit_code;
  {
    std::lock_guard lock(m_mutex);
    if (m_exit_recorded && (!code_given || *code_given == m_exit_code)) {
      // The program's own exit call, with its file, line and thread.
      exit_line = format_exit_line(CommonFields{m_sid_json, m_exit_thread_json, m_brief}, "exit",
                                   m_exit_code, {m_exit_file, m_exit_line_number});
      code = m_exit_code;
    } else if (code_given) {
      code = *code_given;
    }
  }
  if (exit_line.empty()) {
    exit_line = format_exit_line(*m_main, "exit", code, where);
  }
  if (current_context() == m_main) {
    settle(*m_main);  // guards ended on other threads before the exit
  }
  m_main->depth = 0;  // unbalanced regions are unwound silently, as git does
  // Runs on the writer thread once it knows the final drop count.
  // The events threads refused before this point; the writer adds its own.
  const std::uint64_t refused = refused_drops();
  auto compose = [this, head = final_head(std::move(exit_line)), code,
                  refused](std::uint64_t dropped) {
    return head + final_tail(code, dropped + refused);
  };
  return m_writer->finish(compose, timeout, patience) && refused == 0;
}

int Session::exec(std::string_view exe, std::span<const std::string_view> argv, Where where) {
  ThreadContext* ctx = context();
  const int id = m_next_exec_id.fetch_add(1);
  if (ctx == nullptr || !active()) {
    return id;
  }
  LineBuilder b(ctx->line);
  b.begin("exec", common(*ctx), where);
  b.integer("exec_id", id);
  if (!exe.empty()) {
    b.string("exe", exe);
  }
  b.strings("argv", argv);
  b.end();
  push(ctx->line);
  return id;
}

void Session::exec_result(int exec_id, int code, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  LineBuilder b(ctx->line);
  b.begin("exec_result", common(*ctx), where);
  b.integer("exec_id", exec_id);
  b.integer("code", code);
  b.end();
  push(ctx->line);
}

bool Session::end_before_exec(Where where) {
  if (!active()) {
    return false;
  }
  using std::chrono::steady_clock;
  const auto deadline = steady_clock::now() + m_config.exit_flush_timeout;
  const auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(deadline - steady_clock::now(), steady_clock::duration::zero()));
  };
  // Drain first, so that the final events find room in the queue.
  bool flushed = m_writer->flush(left());
  const std::string head =
      final_head(format_exit_line(*m_main, "exit", k_unknown_exit_code, where));
  const std::string finals = head + final_tail(k_unknown_exit_code, m_writer->dropped() + refused_drops());
  flushed = m_writer->push(finals) && flushed;
  return m_writer->flush(left()) && flushed;
}

void Session::hold_writer_for_fork() noexcept { m_writer->hold_for_fork(); }

void Session::release_writer_after_fork() noexcept { m_writer->release_after_fork(); }

void Session::abandon_in_child(Session* previous) noexcept {
  m_abandoned_before = previous;
  m_finished.store(true);
  m_writer->abandon_in_child();
}

std::vector<std::string> Session::child_environment() const {
  std::vector<std::string> out;
  out.push_back("GIT_TRACE2_PARENT_SID=" + m_sid);
  {
    std::lock_guard lock(m_mutex);
    const std::string& name = m_hierarchy.empty() ? m_parent_name : m_hierarchy;
    if (!name.empty()) {
      out.push_back("GIT_TRACE2_PARENT_NAME=" + name);
    }
  }
  if (!m_target_for_children.empty()) {
    out.push_back("GIT_TRACE2_EVENT=" + m_target_for_children);
  }
  return out;
}

}  // namespace trace2d::client::detail
