#include "db/lock_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace trace2d::db {
namespace {

std::string errno_text(int error) { return std::strerror(error); }

// Created exclusively when missing; otherwise opened without following a
// symbolic link, and checked to be a regular file of ours with one link.
int open_checked(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) {
    return fd;
  }
  if (errno == EEXIST) {
    // O_NONBLOCK: a FIFO planted under the name must not hang us here.
    fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  }
  if (fd < 0) {
    const int error = errno;
    throw LockFileError("cannot open lock file '" + path + "': " +
                        (error == ELOOP ? std::string("it is a symbolic link; refusing to follow it")
                                        : errno_text(error)));
  }
  struct stat st {};
  std::string wrong;
  if (::fstat(fd, &st) != 0) {
    wrong = errno_text(errno);
  } else if (!S_ISREG(st.st_mode)) {
    wrong = "it is not a regular file";
  } else if (st.st_uid != ::geteuid()) {
    wrong = "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user";
  } else if (st.st_nlink != 1) {
    wrong = "it has " + std::to_string(st.st_nlink) + " hard links";
  }
  if (!wrong.empty()) {
    ::close(fd);
    throw LockFileError("refusing lock file '" + path + "': " + wrong + "; remove it if it is stale");
  }
  return fd;
}

std::optional<pid_t> read_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) {
    return std::nullopt;
  }
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(text, text + n, pid);
  if (ec != std::errc() || pid <= 0 || (end != text + n && *end != '\n')) {
    return std::nullopt;
  }
  return pid;
}

// Does `path` still name the file open as `fd`? A holder removes the file
// as it lets go, so a lock taken on a file that was removed meanwhile is a
// lock on nothing anyone else will look at.
bool still_named(int fd, const std::string& path) {
  struct stat held {};
  struct stat named {};
  return ::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace

LockHeld::LockHeld(const std::string& path, std::optional<pid_t> holder)
    : LockFileError("'" + path + "' is locked by " +
                    (holder ? "pid " + std::to_string(*holder) : std::string("pid unknown"))),
      m_holder(holder) {}

std::string LockHeld::holder_text() const {
  return m_holder ? "pid " + std::to_string(*m_holder) : std::string("pid unknown");
}

LockFile::LockFile(std::string path) : m_path(std::move(path)) {
  // Each turn loses only to a holder that removed the file between our
  // open and our flock; a few turns are plenty.
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = open_checked(m_path);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::optional<pid_t> holder = read_pid(fd);
      ::close(fd);
      if (error == EWOULDBLOCK) {
        throw LockHeld(m_path, holder);
      }
      throw LockFileError("cannot lock '" + m_path + "': " + errno_text(error));
    }
    if (!still_named(fd, m_path)) {
      ::close(fd);
      continue;
    }
    // Written over, never truncated: the pid ends at its newline (an older,
    // longer pid may follow it), and it only serves the message above.
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      const int error = errno;
      ::close(fd);
      throw LockFileError("cannot write the pid into lock file '" + m_path + "': " + errno_text(error));
    }
    m_fd = fd;
    return;
  }
  throw LockFileError("cannot lock '" + m_path + "': it keeps being removed and recreated");
}

LockFile::~LockFile() { release(); }

LockFile::LockFile(LockFile&& other) noexcept
    : m_path(std::move(other.m_path)), m_fd(std::exchange(other.m_fd, -1)) {}

LockFile& LockFile::operator=(LockFile&& other) noexcept {
  if (this != &other) {
    release();
    m_path = std::move(other.m_path);
    m_fd = std::exchange(other.m_fd, -1);
  }
  return *this;
}

void LockFile::release() noexcept {
  if (m_fd < 0) {
    return;
  }
  // Removed while still locked, and only if the name is still our file: a
  // claimant that opened it meanwhile sees it gone once it gets the lock,
  // and starts over on a fresh file.
  if (still_named(m_fd, m_path)) {
    ::unlink(m_path.c_str());
  }
  ::close(m_fd);
  m_fd = -1;
}

}  // namespace trace2d::db
