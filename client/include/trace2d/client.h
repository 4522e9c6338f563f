#ifndef TRACE2D_CLIENT_H
#define TRACE2D_CLIENT_H
/*
 * trace2d client: emit Git Trace2 events (git's EVENT format, evt "4") from
 * any C or C++ program, so that the git processes it starts appear under it.
 *
 * The C ABI, the only thing libtrace2d-client exports (trace2d/client.hpp
 * is inline C++ over it). C99, and C++ of any standard. Every function is
 * safe to call from any thread at any time, before trace2d_start() and
 * after tracing was turned off (then it does nothing), and never disturbs
 * the host program: tracing must never change what it does. Strings are
 * NUL-terminated, except trace2d_str (pointer and size, bytes copied as
 * they are, as git copies them); NULL for an optional string means
 * "absent", as does "".
 *
 * The macros (trace2d_region_enter, ...) pass the caller's __FILE__ and
 * __LINE__, which become the events' "file" and "line". See client/README.md
 * (flush, exec, exit codes, limits, and the ABI policy).
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The version of this header. The library's own is trace2d_version(); a
 * program may use every function of its header's version with any library
 * of the same major version and a minor version at least as high. */
#define TRACE2D_CLIENT_VERSION_MAJOR 1
#define TRACE2D_CLIENT_VERSION_MINOR 1
#define TRACE2D_CLIENT_VERSION_PATCH 0
#define TRACE2D_CLIENT_VERSION                                               \
  (TRACE2D_CLIENT_VERSION_MAJOR * 10000 + TRACE2D_CLIENT_VERSION_MINOR * 100 + \
   TRACE2D_CLIENT_VERSION_PATCH)

/* Timers and counters a process may define (each); further definitions
 * return -1 and their calls do nothing. */
#define TRACE2D_MAX_TIMERS 64
#define TRACE2D_MAX_COUNTERS 64

#if defined(__GNUC__)
#define TRACE2D_CLIENT_API __attribute__((visibility("default")))
#else
#define TRACE2D_CLIENT_API
#endif

#if defined(__GNUC__)
#define TRACE2D_PRINTF_LIKE(fmt_index, first_arg) \
  __attribute__((format(printf, fmt_index, first_arg)))
#else
#define TRACE2D_PRINTF_LIKE(fmt_index, first_arg)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A string by pointer and size (need not be NUL-terminated; may hold any
 * bytes). {NULL, 0} and {"", 0} both mean "absent" where a string is
 * optional. */
typedef struct trace2d_str {
  const char* data;
  size_t size;
} trace2d_str;

/* The library's version, as TRACE2D_CLIENT_VERSION (10000 * major + 100 *
 * minor + patch), and as text ("1.0.0"). */
TRACE2D_CLIENT_API unsigned trace2d_version(void);
TRACE2D_CLIENT_API const char* trace2d_version_string(void);

/* ---- Starting and ending the session ---------------------------------- */

typedef struct trace2d_options {
  /* Set by trace2d_options_init(); lets later versions add fields. */
  size_t struct_size;
  /* Where events go, in GIT_TRACE2_EVENT syntax ("af_unix:stream:/run/...",
   * a file, a directory, "2".."9", "1"). NULL or "": GIT_TRACE2_EVENT. */
  const char* target;
  /* version.exe when `version` (below) is not set. NULL: the base name of
   * argv[0]. */
  const char* exe;
  /* The cmd_name sent after start. NULL: the base name of argv[0]. */
  const char* cmd_name;
  /* Bound of the queue between the caller and the writer thread. */
  size_t queue_bytes;
  /* At exit, how long to wait for a collector that takes nothing; while it
   * takes the queue, the exit may wait up to the queue's bytes at 1 MB/s. */
  unsigned exit_flush_ms;
  /* Set GIT_TRACE2_PARENT_SID / GIT_TRACE2_PARENT_NAME in the environment,
   * so that every child (also via system()) is stitched under this process. */
  int export_environment;
  /* Send a "signal" event when a fatal signal with the default action
   * kills the process (handlers are installed only where none exists). */
  int signal_events;
  /* Since 1.1: the program's version ("2.4.1"), sent as version.exe, where
   * git sends its own version. NULL or "": `exe` as above. */
  const char* version;
} trace2d_options;

/* Sets up `options` with the defaults. The library's trace2d_options_init
 * sets up 1.0's fields alone (what a program built against 1.0 has room
 * for); since 1.1 the macro below passes the caller's own size to
 * trace2d_options_init_size, which sets up every field that size holds. */
TRACE2D_CLIENT_API void trace2d_options_init(trace2d_options* options);
TRACE2D_CLIENT_API void trace2d_options_init_size(trace2d_options* options, size_t size);
#define trace2d_options_init(options) \
  trace2d_options_init_size((options), sizeof(trace2d_options))

/* Starts the session: version, start (argv) and cmd_name. Call once, early,
 * from the main thread (ideally before other threads exist, since it may
 * set environment variables). options may be NULL; when not, it must have
 * been set up by trace2d_options_init() (else tracing stays off, and
 * trace2d_off_reason() says so). Returns 1 when events are being sent, 0
 * when tracing is off. */
TRACE2D_CLIENT_API int trace2d_start_fl(const char* file, int line, int argc,
                                        const char* const* argv, const trace2d_options* options);
#define trace2d_start(argc, argv, options) \
  trace2d_start_fl(__FILE__, __LINE__, (argc), (argv), (options))

/* 1 when events are being sent. */
TRACE2D_CLIENT_API int trace2d_enabled(void);
/* This process's SID ("" when no session was started: not started, no
 * target, or the target could not be opened). Since 1.1 it stays after
 * trace2d_shutdown() and a failed target. Valid until exit. */
TRACE2D_CLIENT_API const char* trace2d_sid(void);
/* Why tracing is off, in a sentence ("" while it is on): not started, no
 * target, the target could not be opened (git's own message), options not
 * initialised, the target failed, the session ended. Valid until the next
 * trace2d_start(). */
TRACE2D_CLIENT_API const char* trace2d_off_reason(void);
/* Events not sent so far, whatever the reason (since 1.1 also those the
 * nesting limit suppresses; trace2d_dropped_by() tells them apart). The
 * queue and target losses are sent at exit as data trace2d/dropped_events. */
TRACE2D_CLIENT_API uint64_t trace2d_dropped(void);

/* Records the exit code for the exit/atexit events sent at process exit and
 * returns it: `return trace2d_exit(code);` at the end of main. Optional with
 * glibc, whose on_exit() tells the library the code the process exits with
 * (that code is sent; the recorded one only lends its file and line when
 * they agree). Elsewhere an exit without it is sent with code -1: unknown. */
TRACE2D_CLIENT_API int trace2d_exit_fl(const char* file, int line, int code);
#define trace2d_exit(code) trace2d_exit_fl(__FILE__, __LINE__, (code))

/* ---- Flush, shutdown and exec ------------------------------------------ */

/* Waits until every event sent so far has been handed to the collector (the
 * kernel's socket buffer, the file), at most timeout_ms. Returns 1 when it
 * was (or tracing is off: nothing to wait for), 0 on timeout or when the
 * target failed. Safe in a forked child (after trace2d_start) before _exit. */
TRACE2D_CLIENT_API int trace2d_flush(unsigned timeout_ms);

/* Ends the session now, as exit(code) would: exit, timers, counters, the
 * drop count, atexit; waits at most timeout_ms for them to be handed over.
 * Nothing is sent afterwards (trace2d_enabled() is 0). Returns 1 when every
 * event of the session was handed over and none was dropped. For a process
 * that ends with _exit() (a forked child) or a program that wants the
 * result (OpenTelemetry's Shutdown). */
TRACE2D_CLIENT_API int trace2d_shutdown_fl(const char* file, int line, int code,
                                           unsigned timeout_ms);
#define trace2d_shutdown(code, timeout_ms) \
  trace2d_shutdown_fl(__FILE__, __LINE__, (code), (timeout_ms))

/* git's trace2_exec(): an "exec" event (exe may be NULL; argv is
 * NULL-terminated). Returns the exec_id for trace2d_exec_result(). */
TRACE2D_CLIENT_API int trace2d_exec_fl(const char* file, int line, const char* exe,
                                       const char* const* argv);
#define trace2d_exec(exe, argv) trace2d_exec_fl(__FILE__, __LINE__, (exe), (argv))
/* git's trace2_exec_result(): sent when the exec failed (code -1 as git). */
TRACE2D_CLIENT_API void trace2d_exec_result_fl(const char* file, int line, int exec_id, int code);
#define trace2d_exec_result(exec_id, code) \
  trace2d_exec_result_fl(__FILE__, __LINE__, (exec_id), (code))

/* execvp() with the session ended first, so that a wrapper that execs git
 * is stored complete and git's session hangs under it: the exec event, the
 * final events (exit and atexit with code -1: the code is the new
 * program's), a flush bounded by the options' exit_flush_ms, then
 * execvp(program, argv) with GIT_TRACE2_PARENT_SID set. Only returns when
 * execvp failed: -1 with errno from execvp, after an exec_result event (the
 * session goes on; the real exit ends it again). Runs the program whether
 * or not tracing is on. */
TRACE2D_CLIENT_API int trace2d_execvp_fl(const char* file, int line, const char* program,
                                         const char* const* argv);
#define trace2d_execvp(program, argv) trace2d_execvp_fl(__FILE__, __LINE__, (program), (argv))

/* ---- Describing the command -------------------------------------------- */

TRACE2D_CLIENT_API void trace2d_cmd_name_fl(const char* file, int line, const char* name);
#define trace2d_cmd_name(name) trace2d_cmd_name_fl(__FILE__, __LINE__, (name))
TRACE2D_CLIENT_API void trace2d_cmd_mode_fl(const char* file, int line, const char* mode);
#define trace2d_cmd_mode(mode) trace2d_cmd_mode_fl(__FILE__, __LINE__, (mode))
/* scope may be NULL (git sends it since 2.45: "system", "global", ...). */
TRACE2D_CLIENT_API void trace2d_def_param_fl(const char* file, int line, const char* param,
                                             const char* value, const char* scope);
#define trace2d_def_param(param, value) \
  trace2d_def_param_fl(__FILE__, __LINE__, (param), (value), NULL)
TRACE2D_CLIENT_API void trace2d_def_repo_fl(const char* file, int line, int repo,
                                            const char* worktree);
#define trace2d_def_repo(repo, worktree) trace2d_def_repo_fl(__FILE__, __LINE__, (repo), (worktree))

/* ---- Regions and data (repo 0: no "repo" field) ------------------------ */

TRACE2D_CLIENT_API void trace2d_region_enter_fl(const char* file, int line, const char* category,
                                                const char* label, int repo, const char* msg);
#define trace2d_region_enter(category, label, msg) \
  trace2d_region_enter_fl(__FILE__, __LINE__, (category), (label), 0, (msg))
TRACE2D_CLIENT_API void trace2d_region_leave_fl(const char* file, int line, const char* category,
                                                const char* label, int repo, const char* msg);
#define trace2d_region_leave(category, label, msg) \
  trace2d_region_leave_fl(__FILE__, __LINE__, (category), (label), 0, (msg))

TRACE2D_CLIENT_API void trace2d_data_string_fl(const char* file, int line, const char* category,
                                               int repo, const char* key, const char* value);
#define trace2d_data_string(category, key, value) \
  trace2d_data_string_fl(__FILE__, __LINE__, (category), 0, (key), (value))
TRACE2D_CLIENT_API void trace2d_data_intmax_fl(const char* file, int line, const char* category,
                                               int repo, const char* key, intmax_t value);
#define trace2d_data_intmax(category, key, value) \
  trace2d_data_intmax_fl(__FILE__, __LINE__, (category), 0, (key), (value))
/* json must be one valid JSON value: it is sent compacted and the call
 * returns 1; anything else is not sent and returns 0. */
TRACE2D_CLIENT_API int trace2d_data_json_fl(const char* file, int line, const char* category,
                                             int repo, const char* key, const char* json);
#define trace2d_data_json(category, key, json) \
  trace2d_data_json_fl(__FILE__, __LINE__, (category), 0, (key), (json))

/* ---- Messages ---------------------------------------------------------- */

/* An "error" event: msg is the formatted text, fmt the format itself. */
TRACE2D_CLIENT_API void trace2d_error_fl(const char* file, int line, const char* fmt, ...)
    TRACE2D_PRINTF_LIKE(3, 4);
#define trace2d_error(...) trace2d_error_fl(__FILE__, __LINE__, __VA_ARGS__)
/* A "printf" event. */
TRACE2D_CLIENT_API void trace2d_printf_fl(const char* file, int line, const char* fmt, ...)
    TRACE2D_PRINTF_LIKE(3, 4);
#define trace2d_printf(...) trace2d_printf_fl(__FILE__, __LINE__, __VA_ARGS__)

/* ---- Threads ----------------------------------------------------------- */

/* Call first thing in a thread's function: the thread becomes "thNN:name". */
TRACE2D_CLIENT_API void trace2d_thread_start_fl(const char* file, int line, const char* name);
#define trace2d_thread_start(name) trace2d_thread_start_fl(__FILE__, __LINE__, (name))
/* Call last thing: per-thread timers and counters, then thread_exit. */
TRACE2D_CLIENT_API void trace2d_thread_exit_fl(const char* file, int line);
#define trace2d_thread_exit() trace2d_thread_exit_fl(__FILE__, __LINE__)

/* ---- Timers and counters ----------------------------------------------- */

/* Define once (same category and name: same id). per_thread: also send
 * th_timer/th_counter for each thread that used it, at its exit. Returns an
 * id, or -1 (then the other calls do nothing). */
TRACE2D_CLIENT_API int trace2d_timer_define(const char* category, const char* name, int per_thread);
TRACE2D_CLIENT_API void trace2d_timer_start(int timer_id);
TRACE2D_CLIENT_API void trace2d_timer_stop(int timer_id);
TRACE2D_CLIENT_API int trace2d_counter_define(const char* category, const char* name,
                                              int per_thread);
TRACE2D_CLIENT_API void trace2d_counter_add(int counter_id, int64_t value);

/* ---- Child processes --------------------------------------------------- */

typedef struct trace2d_child_options {
  size_t struct_size;      /* set by trace2d_child_options_init() */
  const char* child_class; /* NULL: "?" as git */
  const char* hook_name;   /* set: child_class becomes "hook" */
  const char* cd;          /* working directory of the child, or NULL */
  int use_shell;           /* run through /bin/sh -c as git does */
  const char* const* env;  /* extra "NAME=value" entries, NULL-terminated */
  int stdin_fd;            /* -1: inherited */
  int stdout_fd;
  int stderr_fd;
} trace2d_child_options;

TRACE2D_CLIENT_API void trace2d_child_options_init(trace2d_child_options* options);

/* Runs argv (NULL-terminated) to completion with GIT_TRACE2_PARENT_SID and
 * GIT_TRACE2_PARENT_NAME exported, sending child_start and child_exit. Runs
 * the child whether or not tracing is on. Returns git's child code: the
 * exit code, 128+signal, or -1 when it could not be started. *pid_out (may
 * be NULL) receives its pid or -1. options may be NULL. */
TRACE2D_CLIENT_API int trace2d_run_child_fl(const char* file, int line, const char* const* argv,
                                            const trace2d_child_options* options, pid_t* pid_out);
#define trace2d_run_child(argv, options, pid_out) \
  trace2d_run_child_fl(__FILE__, __LINE__, (argv), (options), (pid_out))

/* For a child the program starts itself: child_start before it, child_exit
 * after it (pid 0 when unknown, e.g. after system()). Returns the child id
 * (-1 when tracing is off; trace2d_child_exit then does nothing). */
TRACE2D_CLIENT_API int trace2d_child_start_fl(const char* file, int line, const char* const* argv,
                                              const trace2d_child_options* options);
#define trace2d_child_start(argv, options) \
  trace2d_child_start_fl(__FILE__, __LINE__, (argv), (options))
TRACE2D_CLIENT_API void trace2d_child_exit_fl(const char* file, int line, int child_id, pid_t pid,
                                              int code);
#define trace2d_child_exit(child_id, pid, code) \
  trace2d_child_exit_fl(__FILE__, __LINE__, (child_id), (pid), (code))
/* A waitpid()/system() status as git's child code. */
TRACE2D_CLIENT_API int trace2d_child_code(int wait_status);
/* The "NAME=value" entries a child needs to be stitched under this session
 * (GIT_TRACE2_PARENT_SID, GIT_TRACE2_PARENT_NAME, and GIT_TRACE2_EVENT when
 * the program chose the target), each followed by a NUL, into buffer.
 * Returns the size needed; nothing is written when it exceeds size. 0 when
 * tracing is off. */
TRACE2D_CLIENT_API size_t trace2d_child_environment(char* buffer, size_t size);

/* ---- The same with sized strings (what trace2d/client.hpp calls) ------ */

TRACE2D_CLIENT_API void trace2d_cmd_name_s(const char* file, int line, trace2d_str name);
TRACE2D_CLIENT_API void trace2d_cmd_mode_s(const char* file, int line, trace2d_str mode);
/* value.data NULL: no "value" field (git's def_param of an unset value). */
TRACE2D_CLIENT_API void trace2d_def_param_s(const char* file, int line, trace2d_str param,
                                            trace2d_str value, trace2d_str scope);
TRACE2D_CLIENT_API void trace2d_def_repo_s(const char* file, int line, int repo,
                                           trace2d_str worktree);
/* Returns 1 when the region was entered (tracing on): leave it then. */
TRACE2D_CLIENT_API int trace2d_region_enter_s(const char* file, int line, trace2d_str category,
                                              trace2d_str label, int repo, trace2d_str msg);
TRACE2D_CLIENT_API void trace2d_region_leave_s(const char* file, int line, trace2d_str category,
                                               trace2d_str label, int repo, trace2d_str msg);
/* Leaves the innermost open region with the category and label it was
 * entered with (for scope guards). */
TRACE2D_CLIENT_API void trace2d_region_leave_innermost_fl(const char* file, int line, int repo);
TRACE2D_CLIENT_API void trace2d_data_string_s(const char* file, int line, trace2d_str category,
                                              int repo, trace2d_str key, trace2d_str value);
TRACE2D_CLIENT_API void trace2d_data_intmax_s(const char* file, int line, trace2d_str category,
                                              int repo, trace2d_str key, intmax_t value);
TRACE2D_CLIENT_API int trace2d_data_json_s(const char* file, int line, trace2d_str category,
                                           int repo, trace2d_str key, trace2d_str json);
TRACE2D_CLIENT_API void trace2d_error_s(const char* file, int line, trace2d_str msg,
                                        trace2d_str fmt);
TRACE2D_CLIENT_API void trace2d_printf_s(const char* file, int line, trace2d_str msg);
TRACE2D_CLIENT_API void trace2d_thread_start_s(const char* file, int line, trace2d_str name);
TRACE2D_CLIENT_API int trace2d_timer_define_s(trace2d_str category, trace2d_str name,
                                              int per_thread);
TRACE2D_CLIENT_API int trace2d_counter_define_s(trace2d_str category, trace2d_str name,
                                                int per_thread);
TRACE2D_CLIENT_API int trace2d_child_start_s(const char* file, int line, const trace2d_str* argv,
                                             size_t argc, const trace2d_child_options* options);
/* As trace2d_run_child; *child_id_out (may be NULL) receives the child id
 * (-1 when tracing is off). */
TRACE2D_CLIENT_API int trace2d_run_child_s(const char* file, int line, const trace2d_str* argv,
                                           size_t argc, const trace2d_child_options* options,
                                           pid_t* pid_out, int* child_id_out);

/* ---- Since 1.1 --------------------------------------------------------- */

/* Region tokens: trace2d_region_enter_token returns one (0 when tracing is
 * off, or the region was not entered), trace2d_region_leave_token leaves
 * exactly that region, from any thread and in any order: its own category,
 * label, t_rel and nesting (the nesting it was entered at); regions entered
 * later nest as if it had never been open once it is left. A token whose
 * region was left already, whose thread has ended (its regions end with
 * it, as git's do) or from before a fork() does nothing. */
TRACE2D_CLIENT_API uint64_t trace2d_region_enter_token_fl(const char* file, int line,
                                                          const char* category, const char* label,
                                                          int repo, const char* msg);
#define trace2d_region_enter_token(category, label, msg) \
  trace2d_region_enter_token_fl(__FILE__, __LINE__, (category), (label), 0, (msg))
TRACE2D_CLIENT_API uint64_t trace2d_region_enter_token_s(const char* file, int line,
                                                         trace2d_str category, trace2d_str label,
                                                         int repo, trace2d_str msg);
TRACE2D_CLIENT_API void trace2d_region_leave_token_fl(const char* file, int line, uint64_t token,
                                                      int repo);
#define trace2d_region_leave_token(token) \
  trace2d_region_leave_token_fl(__FILE__, __LINE__, (token), 0)

/* Typed data: a double as the shortest text that reads back as the same
 * value ("0.93", "1e-09", "nan", "inf"), a truth value as "true"/"false",
 * an unsigned integer in full (past INTMAX_MAX too). */
TRACE2D_CLIENT_API void trace2d_data_double_fl(const char* file, int line, const char* category,
                                               int repo, const char* key, double value);
#define trace2d_data_double(category, key, value) \
  trace2d_data_double_fl(__FILE__, __LINE__, (category), 0, (key), (value))
TRACE2D_CLIENT_API void trace2d_data_bool_fl(const char* file, int line, const char* category,
                                             int repo, const char* key, int value);
#define trace2d_data_bool(category, key, value) \
  trace2d_data_bool_fl(__FILE__, __LINE__, (category), 0, (key), (value))
TRACE2D_CLIENT_API void trace2d_data_uintmax_fl(const char* file, int line, const char* category,
                                                int repo, const char* key, uintmax_t value);
#define trace2d_data_uintmax(category, key, value) \
  trace2d_data_uintmax_fl(__FILE__, __LINE__, (category), 0, (key), (value))
TRACE2D_CLIENT_API void trace2d_data_double_s(const char* file, int line, trace2d_str category,
                                              int repo, trace2d_str key, double value);
TRACE2D_CLIENT_API void trace2d_data_bool_s(const char* file, int line, trace2d_str category,
                                            int repo, trace2d_str key, int value);
TRACE2D_CLIENT_API void trace2d_data_uintmax_s(const char* file, int line, trace2d_str category,
                                               int repo, trace2d_str key, uintmax_t value);

/* A child whose output the program wants: trace2d_run_child_capture_s
 * runs it as trace2d_run_child_s does (child_start, child_exit, stitched)
 * and reads its stdout and/or stderr into memory while it runs, both pipes
 * at once (no deadlock however much it writes; the whole output is kept).
 * Past timeout_ms (0: none) the child is killed with SIGKILL (code 137, as
 * git reports a signal) and timed_out set; reading then stops when the
 * pipes close or one second later (a grandchild may hold them). */
typedef struct trace2d_child_capture {
  size_t struct_size;  /* set by trace2d_child_capture_init() */
  int capture_stdout;  /* read the child's stdout (options' stdout_fd is ignored) */
  int capture_stderr;  /* read its stderr (options' stderr_fd is ignored) */
  unsigned timeout_ms;
  /* Out: malloc()ed and NUL-terminated, for the caller to free(); NULL
   * when not captured (or out of memory). */
  char* stdout_data;
  size_t stdout_size;
  char* stderr_data;
  size_t stderr_size;
  int timed_out;
} trace2d_child_capture;

TRACE2D_CLIENT_API void trace2d_child_capture_init(trace2d_child_capture* capture);
/* Returns git's child code as trace2d_run_child_s; capture may not be NULL. */
TRACE2D_CLIENT_API int trace2d_run_child_capture_s(const char* file, int line,
                                                   const trace2d_str* argv, size_t argc,
                                                   const trace2d_child_options* options,
                                                   trace2d_child_capture* capture, pid_t* pid_out,
                                                   int* child_id_out);

/* git's start_command()/finish_command(): a child that runs while the
 * program does other work, stitched as trace2d_run_child_s's (child_start
 * when it starts, child_exit when it is finished, GIT_TRACE2_PARENT_SID
 * and _NAME in its environment). Set it up with
 * trace2d_child_process_init(), ask for pipes, start it with
 * trace2d_start_command*, finish it with trace2d_finish_command. */
typedef struct trace2d_child_process {
  size_t struct_size; /* set by trace2d_child_process_init() */
  /* In: a pipe to the child's stdin, from its stdout, from its stderr (each
   * replaces the options' stdin_fd, stdout_fd, stderr_fd). */
  int pipe_stdin;
  int pipe_stdout;
  int pipe_stderr;
  /* Out, from trace2d_start_command*: */
  pid_t pid;    /* -1 when it could not be started */
  int child_id; /* -1 when tracing is off */
  /* This process's end of each pipe asked for (close-on-exec), else -1.
   * The caller owns them, as git's callers do: write stdin_fd and close it
   * (a child that reads its input to the end waits for that), read
   * stdout_fd and stderr_fd to their end before finishing (a child blocks
   * once it has filled a pipe nobody reads: 64 KiB on Linux), close them. */
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;
  /* Out, from trace2d_finish_command: */
  int finished;  /* 1 once finished (or when it never started) */
  int code;      /* git's child code, once finished */
  int timed_out; /* killed at the finish's timeout */
} trace2d_child_process;

TRACE2D_CLIENT_API void trace2d_child_process_init(trace2d_child_process* child);
/* Starts argv (trace2d_str array, or NULL-terminated for the _fl form)
 * with the options (may be NULL) and the pipes `child` asks for; sends
 * child_start. Returns 0 when it runs, -1 when it could not be started (as
 * git, its child_exit with pid and code -1 is then sent at once, and no
 * pipe is open) or `child` was not set up by trace2d_child_process_init().
 * Runs the child whether or not tracing is on. */
TRACE2D_CLIENT_API int trace2d_start_command_s(const char* file, int line, const trace2d_str* argv,
                                               size_t argc, const trace2d_child_options* options,
                                               trace2d_child_process* child);
TRACE2D_CLIENT_API int trace2d_start_command_fl(const char* file, int line,
                                                const char* const* argv,
                                                const trace2d_child_options* options,
                                                trace2d_child_process* child);
#define trace2d_start_command(argv, options, child) \
  trace2d_start_command_fl(__FILE__, __LINE__, (argv), (options), (child))
/* Waits for the child (past timeout_ms, 0: no limit, it is killed with
 * SIGKILL: timed_out is set and the code is 137, as git reports a signal),
 * sends child_exit and returns git's child code (-1 for a child that never
 * started). Once: a second call returns the code again without waiting.
 * The pipes are left to the caller. */
TRACE2D_CLIENT_API int trace2d_finish_command_fl(const char* file, int line,
                                                 trace2d_child_process* child,
                                                 unsigned timeout_ms);
#define trace2d_finish_command(child, timeout_ms) \
  trace2d_finish_command_fl(__FILE__, __LINE__, (child), (timeout_ms))

/* The target "memory:" (trace2d_options.target; no git syntax, never passed
 * to children) keeps the event lines in the process, for a program's own
 * unit tests: trace2d_memory_take() flushes (at most 1 s) and returns the
 * lines written since its last call, malloc()ed and NUL-terminated for the
 * caller to free(), *size_out their size (may be NULL); also after
 * trace2d_shutdown(), with the final events. NULL when no session was
 * started (an empty string for another target). At most 16 MiB are kept
 * between two calls; lines past it are dropped (TRACE2D_DROP_TARGET). */
TRACE2D_CLIENT_API char* trace2d_memory_take(size_t* size_out);

/* Why events were not sent (trace2d_dropped_by). */
#define TRACE2D_DROP_QUEUE_FULL 1 /* the queue was full (a slow or stopped collector) */
#define TRACE2D_DROP_TARGET 2     /* the target failed, refused a datagram that big, or
                                     had not taken them when the exit wait ended */
#define TRACE2D_DROP_NESTING 3    /* deeper than GIT_TRACE2_EVENT_NESTING (git's rule) */
/* Events not sent for `reason` (0 for an unknown reason). */
TRACE2D_CLIENT_API uint64_t trace2d_dropped_by(int reason);

#ifdef __cplusplus
}
#endif

/* C11: trace2d_data(category, key, value) picks the typed call from the
 * value's type; a type it cannot send as it is (a pointer other than a
 * string, a struct) does not compile. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define trace2d_data(category, key, value)                       \
  _Generic((value),                                              \
      _Bool: trace2d_data_bool_fl,                               \
      double: trace2d_data_double_fl,                            \
      float: trace2d_data_double_fl,                             \
      char*: trace2d_data_string_fl,                             \
      const char*: trace2d_data_string_fl,                       \
      unsigned char: trace2d_data_uintmax_fl,                    \
      unsigned short: trace2d_data_uintmax_fl,                   \
      unsigned int: trace2d_data_uintmax_fl,                     \
      unsigned long: trace2d_data_uintmax_fl,                    \
      unsigned long long: trace2d_data_uintmax_fl,               \
      signed char: trace2d_data_intmax_fl,                       \
      short: trace2d_data_intmax_fl,                             \
      int: trace2d_data_intmax_fl,                               \
      long: trace2d_data_intmax_fl,                              \
      long long: trace2d_data_intmax_fl)(__FILE__, __LINE__, (category), 0, (key), (value))
#endif

/* git's `#define exit(code) exit(trace2_cmd_exit(code))`, opt-in: with
 * TRACE2D_WRAP_EXIT defined before this header, every exit(code) of the
 * file records its code, file and line first. For C (C++'s <cstdlib>
 * undefines macros named exit: use `return trace2d::client::exit(code)`). */
#if defined(TRACE2D_WRAP_EXIT) && !defined(exit)
#include <stdlib.h>
#define exit(code) exit(trace2d_exit(code))
#endif

#endif /* TRACE2D_CLIENT_H */
