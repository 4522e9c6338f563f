#include "ctl/query/daemon_liveness.hpp"

#include <signal.h>

#include <cerrno>

namespace trace2d::ctl {

bool process_exists(pid_t pid) {
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

Liveness liveness(pid_t pid, std::int64_t updated_us, std::int64_t now_us) {
  if (!process_exists(pid)) {
    return Liveness::not_running;
  }
  return now_us - updated_us < k_status_stale_us ? Liveness::running : Liveness::not_updating;
}

}  // namespace trace2d::ctl
