// client-emitter-1.1: the scenarios of what client 1.1 changed, one per run
// (the library's state is per process).
//
//   client-emitter-1.1 SCENARIO
//
// Prints "sid <SID>" once started, "off_reason <why>" when tracing is off.
// Scenarios:
//   guards-heap       two heap guards A then B, A destroyed first; a region
//                     entered while B is still open; then B
//   guards-names      guards with long names (past the 64 bytes kept in
//                     place) and short ones, left out of order
//   guards-thread     a guard made on main, destroyed on another thread;
//                     then a region on main
//   guards-worker     a guard moved into a worker, which ends it while main
//                     has entered another region and runs `git version`
//                     in it; then main leaves its region
//   flood-child       20,000 data events of 150 bytes (more than the
//                     queue holds, unless the collector keeps up), then
//                     `git version` as a child
//   guards-location   guards put into unique_ptr/optional the documented
//                     ways, and leave() called early
//   exit-live-region  `return exit(0)` with a Region alive
//   typed-data        data of every type, in C++ and through the C calls
//   nesting-drops     data and a region past the nesting limit; prints
//                     "dropped <n>" and "dropped_nesting <n>"
//   sid-after-shutdown  prints "sid_after <sid>" after shutdown()
//   capture           a child writing 1 MiB to stdout and a line to stderr,
//                     captured; prints "out_bytes", "out_ok", "err", "code"
//   capture-timeout   a child sleeping 30 s with a 300 ms timeout; prints
//                     "timed_out", "code"
//   capture-c         the same 1 MiB through the C call
//   memory            the "memory:" target: events taken twice (before and
//                     after shutdown); prints "first"/"second" event names
//   version           started with Options::version (and exe, which it
//                     overrides)
//   command           git's start/finish split: `git hash-object --stdin`
//                     started with pipes, a region while it runs, its
//                     input written and its output read, then finish();
//                     prints "started", "pid", "hash", "code", "again"
//   command-timeout   `git cat-file --batch` waiting for input, finished
//                     with a 300 ms timeout; prints "timed_out", "code"
//   command-scope     a `git cat-file --batch` child left to the
//                     destructor (which closes its stdin and waits)
//   command-missing   a program that does not exist; prints "started",
//                     "pid", "code"

#include <trace2d/client.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace t2 = trace2d::client;

namespace {

int guards_heap() {
  auto a = std::make_unique<t2::Region>(t2::Region("guards", "a"));
  auto b = std::make_unique<t2::Region>(t2::Region("guards", "b"));
  a.reset();  // leaves a, not b (1.0 left the innermost: b)
  {
    t2::Region c("guards", "c");  // nests in b alone: nesting 2
  }
  b.reset();
  return t2::exit(0);
}

int guards_names() {
  const std::string long_label(100, 'l');
  auto a = std::make_unique<t2::Region>(t2::Region("a-long-category", long_label));
  auto b = std::make_unique<t2::Region>(t2::Region("b", "short"));
  a.reset();  // moves b's entry down in the region stack
  {
    t2::Region c("c", std::string(70, 'c'));  // reuses a's old entry, long again
  }
  {
    t2::Region d("d", "x");  // the same entry, short after long
  }
  b.reset();
  return t2::exit(0);
}

int guards_thread() {
  auto a = std::make_unique<t2::Region>(t2::Region("guards", "main-a"));
  std::thread([&a] { a.reset(); }).join();  // 1.0 sent nothing; a stayed open
  {
    t2::Region after("guards", "after");  // top level again: nesting 1
  }
  return t2::exit(0);
}

int guards_worker() {
  t2::Region download("job", "download");
  std::thread worker([r = std::move(download)]() mutable {
    usleep(3000);
    r.leave();
  });
  t2::Region unpack("job", "unpack");  // entered inside download
  usleep(6000);                        // download ends meanwhile, on the worker
  t2::run_child({"git", "version"});   // inside unpack
  unpack.leave();
  worker.join();
  return t2::exit(0);
}

int flood_child() {
  const std::string value(150, 'x');
  for (int i = 0; i < 20000; ++i) {
    t2::data("flood", "key", value);
  }
  t2::run_child({"git", "version"});
  return t2::exit(0);
}

int guards_location() {
  // One at a time: nested, the third would pass the nesting limit.
  {
    auto moved = std::make_unique<t2::Region>(t2::Region("where", "make_unique"));
  }
  {
    std::optional<t2::Region> optional;
    optional = t2::Region("where", "optional");
  }
  {
    std::optional<t2::Region> emplaced;
    emplaced.emplace("where", "emplace", "", 0, t2::Location::current());
  }
  t2::Region early("where", "early");
  early.leave();
  early.leave();  // once only
  return t2::exit(0);
}

int exit_live_region() {
  t2::Region live("exit", "live");
  return t2::exit(0);
}

int typed_data() {
  t2::data("typed", "double", 0.93);
  t2::data("typed", "tiny", 1e-9);
  t2::data("typed", "float", 0.5F);
  t2::data("typed", "true", true);
  t2::data("typed", "false", false);
  t2::data("typed", "int", 42);
  t2::data("typed", "negative", std::int64_t{-7});
  t2::data("typed", "u64max", std::numeric_limits<std::uint64_t>::max());
  t2::data("typed", "short", static_cast<short>(-3));
  t2::data("typed", "literal", "text");
  t2::data("typed", "string", std::string("from std::string"));
  trace2d_data_double("typed", "c-double", 2.5);
  trace2d_data_bool("typed", "c-bool", 1);
  trace2d_data_uintmax("typed", "c-uintmax", std::numeric_limits<std::uintmax_t>::max());
  return t2::exit(0);
}

int nesting_drops() {
  {
    t2::Region outer("nest", "outer");
    t2::Region inner("nest", "inner");
    t2::data("nest", "too-deep", "dropped by the nesting limit");  // nesting 3
    t2::Region deeper("nest", "deeper");                          // enter and leave: 2 more
  }
  std::printf("dropped %llu\n", static_cast<unsigned long long>(t2::dropped()));
  std::printf("dropped_nesting %llu\n",
              static_cast<unsigned long long>(t2::dropped(t2::DropReason::nesting)));
  std::printf("dropped_queue_full %llu\n",
              static_cast<unsigned long long>(t2::dropped(t2::DropReason::queue_full)));
  return t2::exit(0);
}

int sid_after_shutdown() {
  t2::shutdown(0);
  std::printf("sid_after %s\n", std::string(t2::sid()).c_str());
  return 0;
}

// 1 MiB of 'x' on stdout (past any pipe's buffer), one line on stderr.
const char* const k_loud_child =
    "head -c 1048576 /dev/zero | tr '\\000' x; echo to-stderr >&2; exit 3";

int capture() {
  t2::Capture both;
  both.err = true;
  const t2::CapturedChild child = t2::run_child_captured({"/bin/sh", "-c", k_loud_child}, both);
  const bool all_x = child.out.find_first_not_of('x') == std::string::npos;
  std::printf("out_bytes %zu\nout_ok %d\nerr %s\ncode %d\n", child.out.size(), all_x ? 1 : 0,
              child.err.substr(0, child.err.find('\n')).c_str(), child.result.code);
  return t2::exit(0);
}

int capture_timeout() {
  t2::Capture quick;
  quick.timeout = std::chrono::milliseconds(300);
  const t2::CapturedChild child = t2::run_child_captured({"sleep", "30"}, quick);
  std::printf("timed_out %d\ncode %d\n", child.timed_out ? 1 : 0, child.result.code);
  return t2::exit(0);
}

int capture_c() {
  const trace2d_str argv[] = {{"/bin/sh", 7}, {"-c", 2}, {k_loud_child, std::strlen(k_loud_child)}};
  trace2d_child_capture c;
  trace2d_child_capture_init(&c);
  c.capture_stdout = 1;
  pid_t pid = -1;
  const int code = trace2d_run_child_capture_s(__FILE__, __LINE__, argv, 3, nullptr, &c, &pid,
                                               nullptr);
  std::printf("out_bytes %zu\ncode %d\n", c.stdout_size, code);
  std::free(c.stdout_data);
  std::free(c.stderr_data);
  return t2::exit(0);
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) {
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string read_all(int fd) {
  std::string out;
  char buffer[4096];
  for (ssize_t n = 0; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

int command() {
  t2::Pipes pipes;
  pipes.in = true;
  pipes.out = true;
  t2::ChildProcess git = t2::start_command({"git", "hash-object", "--stdin"}, pipes);
  std::printf("started %d\npid %d\n", git.started() ? 1 : 0, static_cast<int>(git.pid()));
  {
    // The program works while git runs: these events come between
    // child_start and child_exit.
    t2::Region meanwhile("command", "meanwhile");
    write_all(git.in(), "hello\n");
    git.close_in();
  }
  const std::string out = read_all(git.out());
  const int code = git.finish();
  std::printf("hash %s\ncode %d\n", out.substr(0, out.find('\n')).c_str(), code);
  std::printf("again %d\n", git.finish());  // once: the same code, no second child_exit
  return t2::exit(0);
}

int command_timeout() {
  t2::Pipes pipes;
  pipes.in = true;  // never written nor closed: git waits for input
  t2::ChildProcess git = t2::start_command({"git", "cat-file", "--batch"}, pipes);
  // Kept open, so that finish() (which closes in()) cannot end it: only the timeout can.
  const int held = ::dup(git.in());
  const int code = git.finish(std::chrono::milliseconds(300));
  ::close(held);
  std::printf("timed_out %d\ncode %d\n", git.timed_out() ? 1 : 0, code);
  return t2::exit(0);
}

int command_scope() {
  {
    t2::Pipes pipes;
    pipes.in = true;
    t2::ChildProcess git = t2::start_command({"git", "cat-file", "--batch"}, pipes);
    t2::ChildProcess moved = std::move(git);  // the moved-from one does nothing
  }  // closes git's stdin, waits, child_exit
  return t2::exit(0);
}

int command_missing() {
  t2::ChildProcess missing = t2::start_command({"/nonexistent/git"});
  std::printf("started %d\npid %d\ncode %d\n", missing.started() ? 1 : 0,
              static_cast<int>(missing.pid()), missing.finish());
  return t2::exit(0);
}

std::string event_names(const std::string& lines) {
  std::string names;
  for (std::size_t pos = 0; pos < lines.size();) {
    const std::size_t end = lines.find('\n', pos);
    const std::string line = lines.substr(pos, end - pos);
    const std::size_t at = line.find("\"event\":\"");
    if (at != std::string::npos) {
      const std::size_t from = at + 9;
      names += (names.empty() ? "" : ",") + line.substr(from, line.find('"', from) - from);
    }
    pos = end == std::string::npos ? lines.size() : end + 1;
  }
  return names;
}

int memory(int argc, char** argv) {
  t2::Options options;
  options.target = "memory:";
  std::printf("started %d\n", t2::start(argc, argv, options) ? 1 : 0);
  {
    t2::Region region("memory", "work");
    t2::data("memory", "answer", 42);
  }
  std::printf("first %s\n", event_names(t2::memory_events()).c_str());
  std::printf("env %zu\n", t2::child_environment().size());
  t2::shutdown(0);
  std::printf("second %s\n", event_names(t2::memory_events()).c_str());
  std::printf("third [%s]\n", t2::memory_events().c_str());
  return 0;
}

int version(int argc, char** argv) {
  t2::Options options;
  options.version = "2.0.1";
  options.exe = "not sent: the version wins";
  t2::start(argc, argv, options);
  std::printf("sid %s\n", std::string(t2::sid()).c_str());
  return t2::exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    return 2;
  }
  const std::string scenario = argv[1];
  if (scenario == "memory") {
    return memory(argc, argv);  // starts with its own target
  }
  if (scenario == "version") {
    return version(argc, argv);  // starts with its own options
  }
  if (!t2::start(argc, argv)) {
    std::printf("off_reason %s\n", std::string(t2::off_reason()).c_str());
  }
  std::printf("sid %s\n", std::string(t2::sid()).c_str());
  std::fflush(stdout);
  if (scenario == "guards-heap") {
    return guards_heap();
  }
  if (scenario == "guards-names") {
    return guards_names();
  }
  if (scenario == "guards-thread") {
    return guards_thread();
  }
  if (scenario == "guards-worker") {
    return guards_worker();
  }
  if (scenario == "flood-child") {
    return flood_child();
  }
  if (scenario == "guards-location") {
    return guards_location();
  }
  if (scenario == "exit-live-region") {
    return exit_live_region();
  }
  if (scenario == "typed-data") {
    return typed_data();
  }
  if (scenario == "nesting-drops") {
    return nesting_drops();
  }
  if (scenario == "capture") {
    return capture();
  }
  if (scenario == "capture-timeout") {
    return capture_timeout();
  }
  if (scenario == "capture-c") {
    return capture_c();
  }
  if (scenario == "command") {
    return command();
  }
  if (scenario == "command-timeout") {
    return command_timeout();
  }
  if (scenario == "command-scope") {
    return command_scope();
  }
  if (scenario == "command-missing") {
    return command_missing();
  }
  if (scenario == "sid-after-shutdown") {
    return sid_after_shutdown();
  }
  return t2::exit(scenario == "plain" ? 0 : 2);
}
