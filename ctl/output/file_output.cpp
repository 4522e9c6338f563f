#include "ctl/output/file_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace trace2d::ctl {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  throw std::runtime_error("cannot " + what + " '" + path + "': " + std::strerror(error));
}

// Creates the temporary file, never through a symlink or into a file that
// is already there: its name is predictable, and in a shared directory
// (/tmp/report.html) another user could have put a link to a file of ours
// under it. Closes the descriptor, and removes the file unless released
// (only a file it created).
class TempFile {
 public:
  explicit TempFile(std::string path) : m_path(std::move(path)) {
    m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    m_created = m_fd >= 0;
  }
  ~TempFile() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    if (m_created && !m_kept) {
      ::unlink(m_path.c_str());
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  [[nodiscard]] int fd() const { return m_fd; }
  int close() {
    const int rc = ::close(m_fd);
    m_fd = -1;
    return rc;
  }
  void keep() { m_kept = true; }

 private:
  std::string m_path;
  int m_fd = -1;
  bool m_created = false;
  bool m_kept = false;
};

void write_all(int fd, const std::string& path, std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written < 0) {
      fail("write", path, errno);
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

}  // namespace

void write_text_file(const std::string& path, std::string_view text) {
  // /dev/fd/N: a descriptor this process was given open (by the query
  // service, the file its client created): written into as it is. Reopened
  // through /proc, its permissions would be checked against this process,
  // not against the user who owns it.
  if (path.starts_with("/dev/fd/") && path.size() > 8 &&
      path.find_first_not_of("0123456789", 8) == std::string::npos && path.size() < 16) {
    const int fd = std::stoi(path.substr(8));
    if (::fcntl(fd, F_GETFD) < 0) {
      fail("write", path, errno);
    }
    write_all(fd, path, text);
    return;
  }
  // Not a file to replace: a device (/dev/null, /dev/stdout's terminal) or
  // a FIFO is written into as it is. Renaming over it would put a regular
  // file in its place (as root, /dev/null itself).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      fail("write", path, EISDIR);
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
      fail("open", path, errno);
    }
    try {
      write_all(fd, path, text);
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0) {
      fail("write", path, errno);
    }
    return;
  }
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  TempFile file(temp);
  if (file.fd() < 0) {
    const int error = errno;
    if (error == EEXIST) {
      throw std::runtime_error("cannot create '" + path + "': its temporary file '" + temp +
                               "' already exists (left by a crash, or put there by someone else); remove it");
    }
    fail("create", path, error);
  }
  write_all(file.fd(), path, text);
  if (file.close() != 0) {
    fail("write", path, errno);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    fail("replace", path, errno);
  }
  file.keep();
}

std::string output_display_name(const std::string& path) {
  const char* name = std::getenv("TRACE2CTL_OUTPUT_NAME");
  return path == "/dev/fd/3" && name != nullptr && *name != '\0' ? std::string(name) : path;
}

}  // namespace trace2d::ctl
