// The C++ API from a program built against the installed files only, by
// g++ and clang++, as C++17 and C++20: every class and function of
// client.hpp is used once, so each compiler sees all of it, and the link
// proves it calls nothing the library does not export. Also built with
// -fno-exceptions by both.
#include <trace2d/client.hpp>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  namespace t2 = trace2d::client;
  if (!t2::start(argc, argv, {})) {
    std::fprintf(stderr, "tracing off: %s\n", std::string(t2::off_reason()).c_str());
    return 1;
  }
  static t2::Timer timer("consumer", "timer");
  static t2::Counter counter("consumer", "counter", true);
  t2::cmd_mode("consumer");
  t2::def_param("consumer.param", "value");
  t2::def_repo(1, "/tmp");
  {
    t2::Timer::Scope timing(timer);
    t2::Region region("consumer", "work");
    t2::run_child({"git", "--version"});
    const std::vector<std::string> argv_true = {"true"};
    t2::run_child(argv_true, t2::ChildOptions{});
    t2::Child child(argv_true);
    child.finish(0, t2::child_code(0));
    t2::data("consumer", "text", "value");
    t2::data("consumer", "number", std::int64_t{42});
    t2::data("consumer", "ratio", 0.93);
    t2::data("consumer", "flag", true);
    t2::data("consumer", "count", 7U);
    if (!t2::data_json("consumer", "json", "[1,2]") || t2::data_json("consumer", "bad", "{")) {
      return 1;
    }
    t2::error("an error", "an %s");
    t2::message("a message");
    counter.add(2);
  }
  {
    t2::Region moved = t2::Region("consumer", "moved");
    moved.leave();
  }
  if (t2::run_child_captured({"echo", "captured"}).out != "captured\n") {
    return 1;
  }
  {
    t2::Pipes pipes;
    pipes.in = true;
    pipes.out = true;
    t2::ChildProcess cat = t2::start_command({"cat"}, pipes);
    const bool sent = cat.started() && ::write(cat.in(), "x", 1) == 1;
    cat.close_in();
    char byte = 0;
    if (!sent || ::read(cat.out(), &byte, 1) != 1 || byte != 'x' || cat.finish() != 0 ||
        !cat.finished() || cat.code() != 0 || cat.timed_out() || cat.id() < 0 || cat.err() != -1) {
      return 1;
    }
    const std::vector<std::string> argv_true = {"true"};
    t2::ChildProcess later = t2::start_command(argv_true);
    t2::ChildProcess moved = std::move(later);
    if (moved.pid() <= 0 || moved.finish(std::chrono::milliseconds(5000)) != 0) {
      return 1;
    }
  }
  if (t2::dropped(t2::DropReason::nesting) != 0) {
    return 1;
  }
  t2::region_enter("consumer", "manual");
  t2::region_leave("consumer", "manual");
  if (t2::child_environment().empty() || t2::sid().empty() || !t2::enabled() ||
      t2::dropped() != 0 || !t2::flush(std::chrono::milliseconds(1000))) {
    return 1;
  }
  return t2::exit(0);
}
