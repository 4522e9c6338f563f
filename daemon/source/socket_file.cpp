#include "daemon/source/socket_file.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "daemon/source/runtime_dir.hpp"

namespace trace2d::source {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Would a client's connect() reach a live listener on `path`?
bool someone_listens(const std::string& path, int type) {
  const int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const bool live = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return live;
}

}  // namespace

void validate_socket_path(const std::string& path) {
  if (path.empty() || path.front() != '/') {
    throw StartupError("socket path '" + path + "' is not absolute (git requires an absolute path)");
  }
  if (path.size() > k_max_socket_path) {
    throw StartupError("socket path '" + path + "' is " + std::to_string(path.size()) +
                       " bytes; AF_UNIX allows at most " + std::to_string(k_max_socket_path));
  }
}

std::string socket_path_problem(const std::string& path) {
  if (path.empty()) {
    return {};
  }
  if (path.front() != '/') {
    return fmt::format("is not absolute: '{}' (git requires an absolute socket path)", path);
  }
  if (path.size() > k_max_socket_path) {
    return fmt::format("is too long: '{}' is {} bytes; AF_UNIX allows at most {}", path, path.size(),
                       k_max_socket_path);
  }
  return {};
}

SocketFile::SocketFile(std::string path) : m_path(std::move(path)) {
  validate_socket_path(m_path);
  prepare_socket_directory(std::filesystem::path(m_path).parent_path().string());

  try {
    m_lock.emplace(m_path + ".lock");
  } catch (const db::LockHeld& held) {
    throw StartupError("another trace2d (" + held.holder_text() + ") already owns socket '" + m_path + "'");
  } catch (const db::LockFileError& e) {
    throw StartupError(e.what());
  }

  struct stat st {};
  if (::lstat(m_path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      throw StartupError("'" + m_path + "' exists and is not a socket; refusing to replace it");
    }
    if (someone_listens(m_path, SOCK_STREAM) || someone_listens(m_path, SOCK_DGRAM)) {
      throw StartupError("another process is listening on '" + m_path + "'");
    }
    if (::unlink(m_path.c_str()) != 0) {
      throw StartupError("cannot remove stale socket '" + m_path + "': " + errno_text());
    }
  } else if (errno != ENOENT) {
    throw StartupError("cannot inspect '" + m_path + "': " + errno_text());
  }
}

void SocketFile::bound(unsigned mode) {
  if (::chmod(m_path.c_str(), static_cast<mode_t>(mode)) != 0) {
    throw StartupError("cannot set mode of '" + m_path + "': " + errno_text());
  }
  struct stat st {};
  if (::lstat(m_path.c_str(), &st) == 0) {
    m_inode = st.st_ino;
    m_bound = true;
  }
}

SocketFile::~SocketFile() {
  if (m_bound) {
    struct stat st {};
    if (::lstat(m_path.c_str(), &st) == 0 && st.st_ino == m_inode) {
      ::unlink(m_path.c_str());
    }
  }
  // m_lock removes the lock file as it lets go: a clean exit leaves
  // nothing behind.
}

}  // namespace trace2d::source
