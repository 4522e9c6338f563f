// A C++ program written for client 1.0, built against 1.0's headers
// (abi/1.0/) and linked with the current library: the 1.0 Region guard
// (trace2d_region_leave_innermost_fl), typed data as 1.0 had it, exit.
#include <trace2d/client.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace t2 = trace2d::client;

int main(int argc, char** argv) {
  t2::Options options;
  options.exe = "old-program 1.0";
  std::printf("enabled %d\n", t2::start(argc, argv, options) ? 1 : 0);
  std::printf("sid %s\n", std::string(t2::sid()).c_str());
  {
    t2::Region outer("old", "outer");
    t2::data("old", "number", std::int64_t{10});
    t2::Region inner("old", "inner");
    t2::data("old", "text", "value");
  }
  std::printf("dropped %llu\n", static_cast<unsigned long long>(t2::dropped()));
  return t2::exit(5);
}
