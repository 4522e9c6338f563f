// client.hpp with TRACE2D_CLIENT_OFF: the whole API compiles, start() says
// false with the reason, and the program links without the library (the
// build links this without trace2d::client: a call left to the library
// would fail to link). Prints "started", "off_reason", "sid".
#define TRACE2D_CLIENT_OFF
#include <trace2d/client.hpp>

#include <cstdio>
#include <string>

namespace t2 = trace2d::client;

int main(int argc, char** argv) {
  const bool started = t2::start(argc, argv);
  std::printf("started %d\noff_reason %s\nsid [%s]\n", started ? 1 : 0,
              std::string(t2::off_reason()).c_str(), std::string(t2::sid()).c_str());
  static t2::Timer timer("off", "timer");
  static t2::Counter counter("off", "counter");
  {
    t2::Timer::Scope timing(timer);
    t2::Region region("off", "region");
    t2::Thread thread("off");
    t2::data("off", "double", 0.5);
    t2::data("off", "int", 3);
    t2::data("off", "text", "text");
    t2::data_json("off", "json", "[1]");
    t2::cmd_mode("off");
    t2::def_param("off.param", "value");
    t2::error("error");
    t2::message("message");
    counter.add(1);
    region.leave();
  }
  t2::Child child({"true"});
  child.finish(0, 0);
  if (!t2::child_environment().empty() || t2::dropped() != 0 || !t2::flush({}) ||
      t2::enabled()) {
    return 1;
  }
  return t2::exit(0);
}
