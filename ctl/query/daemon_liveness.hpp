#pragma once
// Whether the trace2d that writes a database is at work, from what it
// publishes in daemon_status: its pid and when it last wrote its status.
// `status` and `doctor` judge alike.

#include <sys/types.h>

#include <cstdint>

namespace trace2d::ctl {

enum class Liveness {
  not_running,   // its process is gone
  not_updating,  // its process lives, its status is stale: stopped, hung, or it cannot write the database
  running,
};

// Older than this, a status is stale: the daemon writes it every 2 s by
// default, and a commit can wait a few seconds for a busy database.
constexpr std::int64_t k_status_stale_us = 15 * 1000000;

// Whether process `pid` exists (another user's counts: EPERM).
[[nodiscard]] bool process_exists(pid_t pid);

[[nodiscard]] Liveness liveness(pid_t pid, std::int64_t updated_us, std::int64_t now_us);

}  // namespace trace2d::ctl
