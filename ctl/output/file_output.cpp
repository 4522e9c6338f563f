#include "ctl/output/file_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace trace2d::ctl {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  throw std::runtime_error("cannot " + what + " '" + path + "': " + std::strerror(error));
}

// Closes the descriptor and removes the temporary file unless released.
class TempFile {
 public:
  explicit TempFile(std::string path) : m_path(std::move(path)) {
    m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  ~TempFile() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    if (!m_kept) {
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
  bool m_kept = false;
};

}  // namespace

void write_text_file(const std::string& path, std::string_view text) {
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  TempFile file(temp);
  if (file.fd() < 0) {
    fail("create", path, errno);
  }
  while (!text.empty()) {
    const ssize_t written = ::write(file.fd(), text.data(), text.size());
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written < 0) {
      fail("write", path, errno);
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
  if (file.close() != 0) {
    fail("write", path, errno);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    fail("replace", path, errno);
  }
  file.keep();
}

}  // namespace trace2d::ctl
