// The README's example: one region, one git child, the exit code.
#include <trace2d/client.hpp>

int main(int argc, char** argv) {
  namespace t2 = trace2d::client;
  t2::start(argc, argv);
  {
    t2::Region region("consumer", "work");
    t2::run_child({"git", "--version"});
  }
  return t2::exit(0);
}
