// client-emitter: drives the public C++ API of the client library for the
// tests, one scenario per run (the library's state is per process).
//
//   client-emitter [--queue-bytes N] [--exit-flush-ms N] [--target T] SCENARIO [ARGS...]
//
// Prints "sid <SID>" once started. Scenarios:
//   all ENV_FILE      every event type the library writes; a child's
//                     environment goes to ENV_FILE
//   threads N ITER    N threads emitting nested regions concurrently
//   fork | fork-restart   a fork()ed child emits (after start() again)
//   spam N            N region pairs, then "elapsed_ns <n>"
//   signal-term | sigpipe   dies of SIGTERM / SIGPIPE inside a region
//   sigkill           SIGKILLs itself inside a region, right after start
//   escape            strings that need JSON escaping
//   plain             start and exit only
//   exec PROGRAM ARGS...   a region, then execvp() through the library
//                     (exit 3 after it when it fails)
//   fork-exit flush|shutdown   a forked child starts, emits, flushes or
//                     shuts down (code 3) and _exit()s; prints "child_sid"
//   exit-code N       std::exit(N) without the library's exit
//   system COMMAND    std::system(COMMAND) wrapped in a Child with pid 0
//   diagnose          data_json's answers, the drop count, a region's line
// Prints "off_reason <why>" when tracing is off.

#include <trace2d/client.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace t2 = trace2d::client;

namespace {

void print_sid() {
  std::printf("sid %s\n", std::string(t2::sid()).c_str());
  std::fflush(stdout);
}

int all_events(const char* env_file) {
  t2::cmd_name("sub");  // the hierarchy grows: client-emitter/sub
  t2::cmd_mode("mode-a");
  t2::def_param("core.editor", "vim");
  t2::def_param("user.name", "someone", "global");
  t2::def_repo(1, "/tmp/worktree");
  {
    t2::Region read("index", "do_read_index", ".git/index", 1);
    t2::data("index", "read/version", "2", 1);
    t2::Region inner("cache_tree", "read", {}, 1);
  }
  t2::region_enter("status", "print", "with a message");
  t2::region_leave("status", "print", "with a message", 1);
  t2::region_enter("status", "worktrees");
  t2::region_leave("status", "worktrees");
  t2::data("index", "preload/sum_lstat", std::int64_t{2400});
  t2::data_json(
      "traverse_trees", "statistics",
      "{ \"traverse_trees_count\": 1,\n  \"traverse_trees_max_depth\": [1, 2.5e3, true, null] }",
      1);
  t2::data_json("bad", "not-json", "{unquoted: 1}");  // refused: never sent
  t2::error("pathspec 'x' did not match any file(s) known to git",
            "pathspec '%s' did not match any file(s) known to git");
  t2::message("a printf event");

  static t2::Timer stopwatch("test", "stopwatch", /*per_thread=*/true);
  static t2::Counter ticks("test", "ticks", /*per_thread=*/true);
  static t2::Counter total("test", "total");
  for (int i = 0; i < 2; ++i) {
    t2::Timer::Scope timing(stopwatch);
  }
  ticks.add(3);
  total.add(5);
  std::thread([] {
    t2::Thread thread("helper");
    t2::Region work("helper", "work");
    t2::Timer::Scope timing(stopwatch);
    ticks.add(2);
  }).join();

  const int env_fd = ::open(env_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  t2::run_child({"/usr/bin/env"}, {.child_class = "env", .stdout_fd = env_fd});
  ::close(env_fd);
  t2::run_child({"/nonexistent/program"});               // pid -1, code -1 as git
  t2::run_child({"true"}, {.hook_name = "pre-commit"});  // child_class "hook"
  t2::run_child({"true"}, {.child_class = "git", .cd = "/"});
  const t2::ChildResult shell = t2::run_child({"exit 3"}, {.use_shell = true});
  std::printf("shell_code %d\n", shell.code);
  {
    const std::vector<std::string> argv = {"git", "version"};
    t2::Child child(argv, {.child_class = "dashed"});
    child.finish(4242, 0);
  }
  return t2::exit(0);
}

void worker(int index, int iterations) {
  t2::Thread thread("worker");
  for (int i = 0; i < iterations; ++i) {
    t2::Region outer("work", "outer", std::to_string(index));
    t2::Region inner("work", "inner");
    t2::data("work", "i", i);
  }
}

int threads(int count, int iterations) {
  std::vector<std::thread> pool;
  for (int t = 0; t < count; ++t) {
    pool.emplace_back(worker, t, iterations);
  }
  for (auto& t : pool) {
    t.join();
  }
  return t2::exit(0);
}

int fork_child(bool restart, int argc, char** argv) {
  t2::Region before("fork", "parent-before");
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (restart) {
      t2::start(argc, argv, {.exit_flush_timeout = std::chrono::milliseconds(500)});
      print_sid();
    }
    {
      t2::Region region("fork", "child-region");
      t2::data("fork", "in-child", "yes");
    }
    std::exit(t2::exit(7));  // exit(), so atexit handlers run in the child
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  t2::data("fork", "child-code", t2::child_code(status));
  return t2::exit(0);
}

int spam(long count) {
  const auto started = std::chrono::steady_clock::now();
  for (long i = 0; i < count; ++i) {
    t2::Region region("spam", "pair");
  }
  const auto elapsed = std::chrono::steady_clock::now() - started;
  std::printf("elapsed_ns %lld\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()));
  return t2::exit(0);
}

int die(bool sigpipe) {
  t2::Region region("dying", "region");
  if (sigpipe) {
    int fds[2];
    if (::pipe(fds) != 0) {
      return 1;
    }
    ::close(fds[0]);
    const ssize_t ignored = ::write(fds[1], "x", 1);  // SIGPIPE: the default action kills
    (void)ignored;
  } else {
    ::raise(SIGTERM);
  }
  return 1;  // not reached
}

int escape() {
  t2::data("escape", "value", "quote\" backslash\\ \b\f\n\r\t \x01\x1f \x7f \xff\xfe caf\xc3\xa9");
  t2::region_enter("cat\"egory", "la\nbel", "m\x02sg");
  t2::region_leave("cat\"egory", "la\nbel");
  return t2::exit(0);
}

int exec_program(int argc, char** argv, int first) {
  {
    t2::Region region("wrapper", "before-exec");
  }
  std::vector<const char*> args(argv + first, argv + argc);
  args.push_back(nullptr);
  std::fflush(stdout);
  t2::execvp(args[0], args.data());
  std::printf("exec_errno %d\n", errno);
  return t2::exit(3);
}

int fork_exit(bool shutdown, int argc, char** argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    t2::start(argc, argv);
    std::printf("child_sid %s\n", std::string(t2::sid()).c_str());
    std::fflush(stdout);
    t2::region_enter("forked", "work");
    t2::region_leave("forked", "work");
    const bool handed_over = shutdown ? t2::shutdown(3, std::chrono::milliseconds(2000))
                                      : t2::flush(std::chrono::milliseconds(2000));
    ::_exit(handed_over ? 3 : 4);  // no atexit handlers: only what was flushed is out
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::printf("child_code %d\n", t2::child_code(status));
  return t2::exit(0);
}

int diagnose() {
  std::printf("json_ok %d\n", t2::data_json("d", "good", "{\"a\": [1, 2]}") ? 1 : 0);
  std::printf("json_bad %d\n", t2::data_json("d", "bad", "{unquoted: 1}") ? 1 : 0);
  const int region_line = __LINE__ + 1;
  t2::region_enter("diagnose", "located");
  t2::region_leave("diagnose", "located");
  std::printf("region_line %d\n", region_line);
  for (int i = 0; i < 1000; ++i) {
    t2::data("diagnose", "flood", std::int64_t{i});
  }
  std::printf("dropped %llu\n", static_cast<unsigned long long>(t2::dropped()));
  return t2::exit(0);
}

int system_child(const std::string& command) {
  const std::vector<std::string> argv = {command};
  t2::Child child(argv, {.use_shell = true});
  const int status = std::system(command.c_str());
  child.finish(0, t2::child_code(status));  // pid 0: std::system does not say it
  return t2::exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  t2::Options options;
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--queue-bytes") {
      options.queue_bytes = std::stoul(argv[i + 1]);
    } else if (flag == "--exit-flush-ms") {
      options.exit_flush_timeout = std::chrono::milliseconds(std::stol(argv[i + 1]));
    } else if (flag == "--target") {
      options.target = argv[i + 1];
    }
  }
  if (i >= argc) {
    return 2;
  }
  const std::string scenario = argv[i];
  const auto arg = [&](int n) { return i + n < argc ? std::string(argv[i + n]) : std::string(); };
  if (!t2::start(argc, argv, options)) {
    std::printf("off_reason %s\n", std::string(t2::off_reason()).c_str());
  }
  print_sid();
  if (scenario == "all") {
    return all_events(arg(1).c_str());
  }
  if (scenario == "threads") {
    return threads(std::stoi(arg(1)), std::stoi(arg(2)));
  }
  if (scenario == "fork" || scenario == "fork-restart") {
    return fork_child(scenario == "fork-restart", argc, argv);
  }
  if (scenario == "spam") {
    return spam(std::stol(arg(1)));
  }
  if (scenario == "signal-term" || scenario == "sigpipe") {
    return die(scenario == "sigpipe");
  }
  if (scenario == "sigkill") {
    t2::region_enter("dying", "killed");
    ::raise(SIGKILL);
  }
  if (scenario == "escape") {
    return escape();
  }
  if (scenario == "exec") {
    return exec_program(argc, argv, i + 1);
  }
  if (scenario == "fork-exit") {
    return fork_exit(arg(1) == "shutdown", argc, argv);
  }
  if (scenario == "exit-code") {
    std::fflush(stdout);
    std::exit(std::stoi(arg(1)));
  }
  if (scenario == "diagnose") {
    return diagnose();
  }
  if (scenario == "system") {
    return system_child(arg(1));
  }
  return t2::exit(scenario == "plain" ? 0 : 2);
}
