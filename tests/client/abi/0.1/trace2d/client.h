#ifndef TRACE2D_CLIENT_H
#define TRACE2D_CLIENT_H
/*
 * trace2d client: emit Git Trace2 events (git's EVENT format, evt "4") from
 * any C or C++ program, so that the git processes it starts appear under it.
 *
 * The C ABI. Every function is safe to call from any thread at any time,
 * before trace2d_start() and after tracing was turned off (then it does
 * nothing), and never reports an error to the caller: tracing must never
 * change what the host program does. Strings are NUL-terminated; NULL for an
 * optional string means "absent", as does "".
 *
 * The macros (trace2d_region_enter, ...) pass the caller's __FILE__ and
 * __LINE__, which become the events' "file" and "line". See client/README.md.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* ---- Starting and ending the session ---------------------------------- */

typedef struct trace2d_options {
  /* Set by trace2d_options_init(); lets later versions add fields. */
  size_t struct_size;
  /* Where events go, in GIT_TRACE2_EVENT syntax ("af_unix:stream:/run/...",
   * a file, a directory, "2".."9", "1"). NULL or "": GIT_TRACE2_EVENT. */
  const char* target;
  /* version.exe. NULL: the base name of argv[0]. */
  const char* exe;
  /* The cmd_name sent after start. NULL: the base name of argv[0]. */
  const char* cmd_name;
  /* Bound of the queue between the caller and the writer thread. */
  size_t queue_bytes;
  /* At exit, how long to wait for the collector at most. */
  unsigned exit_flush_ms;
  /* Set GIT_TRACE2_PARENT_SID / GIT_TRACE2_PARENT_NAME in the environment,
   * so that every child (also via system()) is stitched under this process. */
  int export_environment;
  /* Send a "signal" event when a fatal signal with the default action
   * kills the process (handlers are installed only where none exists). */
  int signal_events;
} trace2d_options;

TRACE2D_CLIENT_API void trace2d_options_init(trace2d_options* options);

/* Starts the session: version, start (argv) and cmd_name. Call once, early,
 * from the main thread (ideally before other threads exist, since it may
 * set environment variables). options may be NULL. Returns 1 when events
 * are being sent, 0 when tracing is off. */
TRACE2D_CLIENT_API int trace2d_start_fl(const char* file, int line, int argc,
                                        const char* const* argv, const trace2d_options* options);
#define trace2d_start(argc, argv, options) \
  trace2d_start_fl(__FILE__, __LINE__, (argc), (argv), (options))

/* 1 when events are being sent. */
TRACE2D_CLIENT_API int trace2d_enabled(void);
/* This process's SID ("" when tracing is off). Valid until exit. */
TRACE2D_CLIENT_API const char* trace2d_sid(void);

/* Records the exit code for the exit/atexit events sent at process exit and
 * returns it: `return trace2d_exit(code);` at the end of main. */
TRACE2D_CLIENT_API int trace2d_exit_fl(const char* file, int line, int code);
#define trace2d_exit(code) trace2d_exit_fl(__FILE__, __LINE__, (code))

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
/* json must be one valid JSON value; anything else is not sent. */
TRACE2D_CLIENT_API void trace2d_data_json_fl(const char* file, int line, const char* category,
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

#ifdef __cplusplus
}
#endif

#endif /* TRACE2D_CLIENT_H */
