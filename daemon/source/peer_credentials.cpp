#include "daemon/source/peer_credentials.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <limits>
#include <string>
#include <string_view>

#include "daemon/source/unique_fd.hpp"

namespace trace2d::source {

PeerCredentials peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
    return {};
  }
  return {cred.pid, cred.uid};
}

bool process_exited(std::int64_t pid) {
  // 0 is what SO_PEERCRED gives for a peer in a pid namespace we cannot
  // see; kill() with 0 or less would mean whole process groups.
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) {
    return false;
  }
  if (::kill(static_cast<pid_t>(pid), 0) != 0) {
    return errno == ESRCH;  // EPERM: it exists, as another user's
  }
  // A killed git stays a zombie until its parent reaps it, which a shell
  // waiting on something else may not do soon. The state follows the
  // command name, which may itself hold ") ": look after the last ')'.
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return false;
  }
  char buffer[512];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n <= 0) {
    return false;
  }
  const std::string_view stat(buffer, static_cast<std::size_t>(n));
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat.size()) {
    return false;
  }
  const char state = stat[close + 2];
  return state == 'Z' || state == 'X';
}

}  // namespace trace2d::source
