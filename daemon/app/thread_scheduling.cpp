#include "daemon/app/thread_scheduling.hpp"

#include <sched.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>

namespace trace2d::app {

void use_background_scheduling(bool batch, const char* thread_name) {
  // Already so when systemd started the whole process under it
  // (CPUSchedulingPolicy=batch), whose system call filter would refuse the call.
  if (!batch || ::sched_getscheduler(0) == SCHED_BATCH) {
    return;
  }
  // Lowering one's own policy needs no privilege; pid 0 is the calling
  // thread on Linux, not the whole process.
  const sched_param param{};
  if (::sched_setscheduler(0, SCHED_BATCH, &param) != 0) {
    spdlog::warn("{}: SCHED_BATCH refused ({}); the thread runs under the normal policy", thread_name,
                 std::strerror(errno));
  }
}

}  // namespace trace2d::app
