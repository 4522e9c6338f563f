#include "daemon/source/peer_credentials.hpp"

#include <sys/socket.h>

namespace trace2d::source {

PeerCredentials peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
    return {};
  }
  return {cred.pid, cred.uid};
}

}  // namespace trace2d::source
