#pragma once
// The connecting process's pid and uid, from the kernel.

#include <cstdint>
#include <optional>

namespace trace2d::source {

struct PeerCredentials {
  std::optional<std::int64_t> pid;
  std::optional<std::int64_t> uid;
};

// SO_PEERCRED of a connected AF_UNIX stream socket.
[[nodiscard]] PeerCredentials peer_credentials(int fd);

// Has process `pid` exited? Only a sure yes counts: kill() finds no such
// process, or /proc shows it a zombie (exited, its parent has not reaped it
// yet). A process trace2d may not see (another user's, under hidepid or
// ProtectProc=invisible) is taken as alive. A pid reused since is taken as
// alive too: then the connection's EOF decides, as before.
[[nodiscard]] bool process_exited(std::int64_t pid);

}  // namespace trace2d::source
