#pragma once
// The process's trace2 session: its SID, its settings, the writer, the
// per-thread contexts, and every event the public APIs (C and C++) send.
// One per process, reached through Session::current().
//
// A Session is never destroyed. Threads may still emit while the process
// exits, and the child of a fork() inherits a copy whose mutexes may be
// held and whose writer thread does not exist there: the child drops its
// pointer to it without running any destructor (see abandon_in_child()).

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/src/line_builder.hpp"
#include "client/src/metrics.hpp"
#include "client/src/thread_context.hpp"
#include "client/src/writer.hpp"

namespace trace2d::client::detail {

struct Config {
  std::string target;  // empty: GIT_TRACE2_EVENT
  std::string version;  // version.exe when set (git's sense: a version)
  std::string exe;      // version.exe otherwise (1.0's way)
  std::string cmd_name;
  std::size_t queue_bytes = std::size_t{1} << 20;
  std::chrono::milliseconds exit_flush_timeout{150};
  bool export_environment = true;
  bool signal_events = true;
};

struct ChildSpec {
  std::string_view child_class;
  std::string_view hook_name;
  std::string_view cd;
  bool use_shell = false;
};

// The file name library-made events (atexit, timers, ...) carry, as git's
// carry "trace2/tr2_tgt_event.c".
inline constexpr std::string_view k_internal_file = "trace2d/client";

// The exit code sent when the process's real one cannot be known: exit()
// without the library's exit on a C library without on_exit(), or an exec
// (the new program's session, a child of this one, has the real code).
// git masks its codes to 0..255, so a negative one cannot be mistaken.
inline constexpr int k_unknown_exit_code = -1;

class Session {
 public:
  Session(Config config, std::string sid, std::unique_ptr<Sink> sink);

  // Starts this process's session; false when tracing is off. Once per
  // process (again in the child of a fork).
  static bool start(std::span<const std::string_view> argv, const Config& config, Where where);
  // Inline: every call of the API asks for it first.
  [[nodiscard]] static Session* current() noexcept {
    return s_current.load(std::memory_order_acquire);
  }
  // In the child of a fork: no session any more; returns the parent's.
  static Session* forget_current() noexcept { return s_current.exchange(nullptr); }
  // Why tracing is off in this process, "" while it is on.
  [[nodiscard]] static const char* off_reason() noexcept;
  // A reason start() could not find itself (options not initialised).
  static void note_refusal(const char* reason);

  [[nodiscard]] const std::string& sid() const { return m_sid; }
  [[nodiscard]] bool active() const noexcept {
    return !m_finished.load(std::memory_order_relaxed) && m_writer->accepting();
  }

  void cmd_name(std::string_view name, Where where);
  void cmd_mode(std::string_view mode, Where where);
  void def_param(std::string_view param, std::optional<std::string_view> value,
                 std::string_view scope, Where where);
  void def_repo(int repo, std::string_view worktree, Where where);
  // Returns the region's token (never 0; 0 when tracing is off), which
  // region_leave_token() closes from any thread.
  std::uint64_t region_enter(std::string_view category, std::string_view label,
                             std::string_view msg, int repo, Where where);
  void region_leave(std::string_view category, std::string_view label, std::string_view msg,
                    int repo, Where where);
  // Leaves the innermost region with the category and label it was entered with.
  void region_leave_innermost(int repo, Where where);
  // Leaves the region `token` names, wherever it is in its thread's stack:
  // its own category, label, start and nesting. From another thread the
  // leave is handed to the region's thread, which sends it (with the time
  // of this call) before its next event, region or exit. Nothing when it
  // was left already or its thread has ended.
  void region_leave_token(std::uint64_t token, int repo, Where where);
  void data(std::string_view category, std::string_view key, std::string_view value, int repo,
            Where where);
  // False when `json` is not one valid JSON value (then nothing is sent).
  bool data_json(std::string_view category, std::string_view key, std::string_view json, int repo,
                 Where where);
  void error(std::string_view msg, std::string_view fmt, Where where);
  void printf(std::string_view msg, Where where);

  // Thread scopes: start returns what exit must undo.
  enum class ThreadScope { none, thread, region };
  ThreadScope thread_start(std::string_view name, Where where);
  void thread_exit(ThreadScope scope, Where where);
  // For the C ABI, which has no scope object.
  [[nodiscard]] ThreadScope current_thread_scope();
  // A thread other than main ends: per-thread timers and counters and
  // thread_exit when thread_start was sent, then its totals are kept.
  void end_thread(ThreadContext& ctx, Where where);

  void timer_start(int id);
  void timer_stop(int id);
  void counter_add(int id, std::int64_t value);

  int child_start(std::span<const std::string_view> argv, const ChildSpec& spec, Where where);
  void child_exit(int child_id, pid_t pid, int code, Where where);
  // "NAME=value" entries a child needs to be stitched under this session.
  [[nodiscard]] std::vector<std::string> child_environment() const;

  void record_exit(int code, Where where);
  // The exit handler: final events, then a bounded flush. `status` is what
  // the process passed to exit() when the C library tells (glibc's
  // on_exit); without it the code recorded by record_exit(), else
  // k_unknown_exit_code.
  void finish_at_exit(std::optional<int> status);
  // Ends the session now as exit(code) would (final events, bounded
  // flush); afterwards nothing more is sent. True when every event of the
  // session was handed over and none was dropped.
  bool shutdown(int code, Where where, std::chrono::milliseconds timeout);
  // A memory target's events since the last call, after a flush of at most
  // `timeout`.
  std::string take_memory(std::chrono::milliseconds timeout) {
    (void)m_writer->flush(timeout);
    return m_writer->sink().take_memory();
  }
  // Waits until every event sent so far is handed over, at most `timeout`.
  bool flush(std::chrono::milliseconds timeout) noexcept { return m_writer->flush(timeout); }

  // git's trace2_exec(): the exec event; returns its exec_id.
  int exec(std::string_view exe, std::span<const std::string_view> argv, Where where);
  // git's trace2_exec_result(), sent when exec failed and the program goes on.
  void exec_result(int exec_id, int code, Where where);
  // Just before exec replaces the process: the final events (exit and
  // atexit with k_unknown_exit_code: the code will be the new program's),
  // then a flush bounded by the exit timeout. The session stays open: if
  // exec fails, the program goes on and its real exit ends it again.
  bool end_before_exec(Where where);
  // From a fatal signal handler (async-signal-safe).
  void on_fatal_signal(int signo) noexcept;
  void hold_writer_for_fork() noexcept;
  void release_writer_after_fork() noexcept;
  // In the child of a fork. `previous` is the session abandoned before
  // (in an earlier fork), kept reachable from this one.
  void abandon_in_child(Session* previous) noexcept;

  [[nodiscard]] pid_t pid() const { return m_pid; }
  // Events not sent, by reason (client.h's TRACE2D_DROP_*).
  [[nodiscard]] std::uint64_t dropped_queue_full() {
    return m_writer->dropped() - m_writer->dropped_target() + refused_drops();
  }
  [[nodiscard]] std::uint64_t dropped_target() const { return m_writer->dropped_target(); }
  [[nodiscard]] std::uint64_t dropped_nesting() const {
    return m_dropped_nesting.load(std::memory_order_relaxed);
  }
  // Every event not sent, whatever the reason (the benchmark reports it).
  [[nodiscard]] std::uint64_t dropped() {
    return m_writer->dropped() + refused_drops() + dropped_nesting();
  }

 private:
  friend struct SessionAccess;

  // The calling thread's context, made on its first event. Inline: every
  // event, sent or dropped, asks for it.
  [[nodiscard]] ThreadContext* context() {
    ThreadContext* ctx = current_context();
    return ctx != nullptr && ctx->session == this ? ctx : unknown_thread_context();
  }
  ThreadContext* unknown_thread_context();
  ThreadContext* create_context(std::string_view base_name, bool named, std::int64_t now);
  void release_context(ThreadContext& ctx);
  [[nodiscard]] CommonFields common(const ThreadContext& ctx) const {
    return {m_sid_json, ctx.thread_json, m_brief};
  }
  bool push(const std::string& line, Writer::Line kind = Writer::Line::ordinary) noexcept {
    return m_writer->push(line, kind);
  }
  // Whether a line for `event` with `payload` bytes of its own strings may
  // fit into the queue. When even its lower bound (the event name, the SID
  // and thread fields, the strings unescaped) does not, the event is
  // counted as dropped and false returned, before any formatting: a full
  // queue then costs the caller an atomic load instead of a formatted line
  // (a flood against a stopped collector measured 155 ns per dropped event).
  //
  // The bound is the line's largest size with its strings unescaped: the
  // fixed text, the SID and thread fields, the file name, the payload, and
  // k_field_slack for the time, numbers and key names. A line that does not
  // fit is dropped here, unformatted, so that dropping costs the same for
  // every size of label (1.0 compared a lower bound and formatted the events
  // that fell between it and their real size, 210-420 ns each). Only a
  // string that grows by escaping can still be formatted and then dropped.
  static constexpr std::size_t k_field_slack = 240;
  bool room_for(ThreadContext& ctx, std::string_view event, std::size_t payload,
                Where where) noexcept {
    const std::size_t most = k_field_slack + event.size() + m_sid_json.size() +
                             ctx.thread_json.size() + where.file_size + payload;
    if (m_writer->has_room(most)) {
      return true;
    }
    // Counted by the thread itself, without a locked instruction: only it
    // writes its count (refused_drops() adds them up).
    ctx.refused.store(ctx.refused.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return false;
  }
  // The events room_for() refused, every thread's (and ended threads').
  [[nodiscard]] std::uint64_t refused_drops();
  // git's nesting limit (GIT_TRACE2_EVENT_NESTING): counted, never sent.
  void count_nesting_drop() noexcept { m_dropped_nesting.fetch_add(1, std::memory_order_relaxed); }
  // Formats region_leave for `r` of `ctx`, at `now` (0: read the clock once
  // the event is known to fit), into ctx.line; false when not sent.
  bool format_region_leave(ThreadContext& ctx, const OpenRegion& r, std::string_view msg,
                           std::string_view category, std::string_view label, int repo,
                           Where where, std::int64_t now);
  // On the owner thread, before it uses its region stack: the leaves of its
  // regions whose guards ended on other threads. One load when there are none.
  void settle(ThreadContext& ctx) {
    if (ctx.has_foreign_leaves.load(std::memory_order_acquire)) {
      apply_foreign_leaves(ctx);
    }
  }
  void apply_foreign_leaves(ThreadContext& ctx);
  void emit_version_and_start(std::span<const std::string_view> argv, Where where, bool with_start);
  void append_thread_metrics(std::string& out, ThreadContext& ctx);
  void append_total_metrics(std::string& out);
  std::string format_exit_line(const ThreadContext& ctx, std::string_view event, int code,
                               Where where) const;
  std::string format_exit_line(const CommonFields& fields, std::string_view event, int code,
                               Where where) const;
  // exit (given), the main thread's and the total timers and counters.
  std::string final_head(std::string exit_line);
  // The drop count (when not zero) and atexit, after `head`.
  std::string final_tail(int code, std::uint64_t dropped) const;
  bool finish(std::optional<int> code, Where where, std::chrono::milliseconds timeout, Writer::Patience patience);

  Config m_config;
  std::string m_sid;
  std::string m_sid_json;  // ,"sid":"..."
  bool m_brief = false;
  std::size_t m_max_nesting = 2;
  pid_t m_pid;
  std::int64_t m_start_us;  // t_abs counts from here
  std::unique_ptr<Writer> m_writer;
  std::string m_target_for_children;  // GIT_TRACE2_EVENT to pass on, when we chose it

  mutable std::mutex m_mutex;  // the fields below up to m_open_children
  std::string m_parent_name;   // GIT_TRACE2_PARENT_NAME for the next cmd_name
  std::string m_hierarchy;     // the last cmd_name hierarchy
  std::string m_exit_file;  // where record_exit() was called
  int m_exit_line_number = 0;
  std::string m_exit_thread_json;
  int m_exit_code = 0;
  bool m_exit_recorded = false;  // record_exit() was called
  struct OpenChild {
    std::int64_t start_us = 0;
    bool start_sent = true;  // its child_start was queued: its child_exit goes too
  };
  std::map<int, OpenChild> m_open_children;  // by child id

  std::atomic<int> m_next_child_id{0};
  std::atomic<int> m_next_exec_id{0};
  std::atomic<int> m_next_thread_id{1};
  std::atomic<bool> m_finished{false};
  std::atomic<std::uint64_t> m_dropped_nesting{0};
  // Tells this session's region tokens from an abandoned one's (fork).
  std::uint8_t m_generation;

  std::mutex m_threads_mutex;  // the fields below
  std::vector<std::unique_ptr<ThreadContext>> m_threads;
  std::array<TimerTotal, k_max_metrics> m_timer_totals{};
  std::array<std::int64_t, k_max_metrics> m_counter_totals{};
  std::uint64_t m_refused_by_ended_threads = 0;
  ThreadContext* m_main = nullptr;

  Session* m_abandoned_before = nullptr;

  // This process's session (none before start(), and in a forked child).
  inline static std::atomic<Session*> s_current{nullptr};
};

// A "signal" event when a fatal signal kills the process, as git sends for
// SIGPIPE (signals.cpp). Handlers go only where the signal still has its
// default action (a program's own handlers are never replaced), reset
// themselves, write the event without allocating or locking, and re-raise
// the signal so that the process dies exactly as it would have.
void install_fatal_signal_handlers();

}  // namespace trace2d::client::detail
