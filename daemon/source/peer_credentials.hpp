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

}  // namespace trace2d::source
