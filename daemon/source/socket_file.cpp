#include "daemon/source/socket_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
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

// The lock file, created if missing, never through a symlink (O_NOFOLLOW)
// and never another file that merely has its name: a file that was there
// must be a regular file of ours with one link, or someone could make us
// write into (or lock) a file of their choosing.
int open_lock_file(const std::string& lock_path) {
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) {
    return fd;
  }
  if (errno == EEXIST) {
    fd = ::open(lock_path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  }
  if (fd < 0) {
    const int error = errno;
    throw StartupError("cannot open lock file '" + lock_path + "': " +
                       (error == ELOOP ? std::string("it is a symbolic link; refusing to follow it")
                                       : std::string(std::strerror(error))));
  }
  struct stat st {};
  std::string wrong;
  if (::fstat(fd, &st) != 0) {
    wrong = errno_text();
  } else if (!S_ISREG(st.st_mode)) {
    wrong = "it is not a regular file";
  } else if (st.st_uid != ::geteuid()) {
    wrong = "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user";
  } else if (st.st_nlink != 1) {
    wrong = "it has " + std::to_string(st.st_nlink) + " hard links";
  }
  if (!wrong.empty()) {
    ::close(fd);
    throw StartupError("refusing lock file '" + lock_path + "': " + wrong + "; remove it if it is stale");
  }
  return fd;
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

SocketFile::SocketFile(std::string path) : m_path(std::move(path)) {
  validate_socket_path(m_path);
  prepare_socket_directory(std::filesystem::path(m_path).parent_path().string());

  const std::string lock_path = m_path + ".lock";
  m_lock_fd = open_lock_file(lock_path);
  if (::flock(m_lock_fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t n = ::pread(m_lock_fd, pid, sizeof pid - 1, 0);
    ::close(m_lock_fd);
    m_lock_fd = -1;
    std::string owner = n > 0 ? std::string(pid, static_cast<std::size_t>(n)) : "";
    owner = owner.substr(0, owner.find_first_of("\n "));
    throw StartupError("another trace2d (pid " + (owner.empty() ? "unknown" : owner) + ") already owns socket '" +
                       m_path + "'");
  }
  // Never truncated (the file may be an old one of ours): the pid ends at
  // its newline, and the pid is only for the message above; the lock itself
  // is what counts.
  const std::string pid = std::to_string(::getpid()) + "\n";
  [[maybe_unused]] const ssize_t written = ::pwrite(m_lock_fd, pid.data(), pid.size(), 0);

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
  if (m_lock_fd >= 0) {
    ::close(m_lock_fd);
  }
}

}  // namespace trace2d::source
