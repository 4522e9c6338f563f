#include "client/src/destination.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <strings.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "proto/sid.hpp"

namespace trace2d::client::detail {
namespace {

constexpr std::string_view k_var = "GIT_TRACE2_EVENT";
constexpr std::string_view k_discard_sentinel = "git-trace2-discard";
constexpr int k_max_auto_attempts = 10;

bool equals_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string with_slash(std::string_view dir) {
  std::string path(dir);
  if (path.back() != '/') {
    path.push_back('/');
  }
  return path;
}

void malformed(std::string_view target, std::string& warnings) {
  warnings += "warning: trace2: unknown value for '" + std::string(k_var) + "': '" +
              std::string(target) + "'\n";
}

// A path target is opened non-blocking: a FIFO would otherwise hold open()
// until a reader comes (forever: 1.0 hung start() there). With no reader
// the open fails (ENXIO) and tracing is off; with one, the FIFO stays
// non-blocking and a full pipe is a stalled collector like a full socket.
// A regular file gets its blocking mode back (git's writes to a file), a
// device keeps O_NONBLOCK (a terminal's flow control must not hold the
// writer), and O_NOCTTY keeps a terminal from becoming ours.
Destination try_path(const TargetSettings& s, std::string& warnings) {
  const std::string path(s.target);
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0666);
  if (fd < 0) {
    if (s.debug) {
      const int e = errno;
      warnings += "warning: trace2: could not open '" + path + "' for '" + std::string(k_var) +
                  "' tracing: " + std::strerror(e) +
                  (e == ENXIO ? " (a FIFO with no reader, or a socket: connect with af_unix:)" : "") +
                  "\n";
    }
    return {};
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) {
      ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    }
  }
  return {SinkKind::file, fd, true, false};
}

// git's tr2_dst_too_many_files(): 0 fine, 1 the sentinel exists (write
// nothing), -1 the limit was reached now (`sentinel_fd` may hold the sentinel).
int too_many_files(const TargetSettings& s, int& sentinel_fd) {
  const std::string max_text(s.max_files);
  const int max_files = max_text.empty() ? 0 : std::atoi(max_text.c_str());
  if (max_files <= 0) {
    return 0;
  }
  const std::string dir = with_slash(s.target);
  const std::string sentinel = dir + std::string(k_discard_sentinel);
  struct stat st {};
  if (::stat(sentinel.c_str(), &st) == 0) {
    return 1;
  }
  int count = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (count < max_files && ::readdir(d) != nullptr) {
      ++count;
    }
    ::closedir(d);
  }
  if (count < max_files) {
    return 0;
  }
  sentinel_fd = ::open(sentinel.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  return -1;
}

Destination try_auto_path(const TargetSettings& s, std::string& warnings) {
  const std::string base = with_slash(s.target) + std::string(proto::sid_leaf(s.sid));
  int fd = -1;
  const int too_many = too_many_files(s, fd);
  if (too_many == 1) {
    if (s.debug) {
      warnings += "warning: trace2: not opening " + std::string(k_var) +
                  " trace file due to too many files in target directory " + std::string(s.target) +
                  "\n";
    }
    return {};
  }
  if (too_many == 0) {
    for (int attempt = 0; attempt < k_max_auto_attempts && fd < 0; ++attempt) {
      const std::string path = attempt == 0 ? base : base + "." + std::to_string(attempt);
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
  }
  if (fd < 0) {
    if (s.debug) {
      warnings += "warning: trace2: could not open '" + base + "' for '" + std::string(k_var) +
                  "' tracing: " + std::strerror(errno) + "\n";
    }
    return {};
  }
  return {SinkKind::file, fd, true, too_many == -1};
}

// 0 on success (fd set), else an errno value.
int try_connect(const std::string& path, int type, int& fd) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    return errno;
  }
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    fd = -1;
    return e;
  }
  return 0;
}

Destination try_unix_socket(const TargetSettings& s, std::string& warnings) {
  std::string_view rest = s.target.substr(std::string_view("af_unix:").size());
  bool try_stream = true;
  bool try_dgram = true;
  if (rest.starts_with("stream:")) {
    rest.remove_prefix(7);
    try_dgram = false;
  } else if (rest.starts_with("dgram:")) {
    rest.remove_prefix(6);
    try_stream = false;
  }
  if (rest.empty()) {
    if (s.debug) {
      warnings += "warning: trace2: invalid AF_UNIX value '" + std::string(s.target) + "' for '" +
                  std::string(k_var) + "' tracing\n";
    }
    return {};
  }
  if (rest.front() != '/' || rest.size() >= sizeof(sockaddr_un{}.sun_path)) {
    if (s.debug) {
      warnings += "warning: trace2: invalid AF_UNIX path '" + std::string(rest) + "' for '" +
                  std::string(k_var) + "' tracing\n";
    }
    return {};
  }
  const std::string path(rest);
  int fd = -1;
  int e = 0;
  if (try_stream) {
    e = try_connect(path, SOCK_STREAM, fd);
    if (e == 0) {
      return {SinkKind::stream, fd, true, false};
    }
  }
  if (try_dgram && (!try_stream || e == EPROTOTYPE)) {
    e = try_connect(path, SOCK_DGRAM, fd);
    if (e == 0) {
      return {SinkKind::dgram, fd, true, false};
    }
  }
  if (s.debug) {
    warnings += "warning: trace2: could not connect to socket '" + path + "' for '" +
                std::string(k_var) + "' tracing: " + std::strerror(e) + "\n";
  }
  return {};
}

}  // namespace

std::optional<bool> parse_git_bool(std::string_view text) {
  if (text.empty() || equals_nocase(text, "false") || equals_nocase(text, "no") ||
      equals_nocase(text, "off")) {
    return false;
  }
  if (equals_nocase(text, "true") || equals_nocase(text, "yes") || equals_nocase(text, "on")) {
    return true;
  }
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(copy.c_str(), &end, 0);
  // git_parse_int() also takes a k/m/g unit suffix.
  if (end != copy.c_str() && errno == 0 &&
      (*end == '\0' ||
       ((*end == 'k' || *end == 'K' || *end == 'm' || *end == 'M' || *end == 'g' || *end == 'G') &&
        end[1] == '\0'))) {
    return value != 0;
  }
  return std::nullopt;
}

Destination open_destination(const TargetSettings& s, std::string& warnings) {
  const std::string_view t = s.target;
  if (t.empty() || t == "0" || equals_nocase(t, "false")) {
    return {};
  }
  if (t == "1" || equals_nocase(t, "true")) {
    return {SinkKind::file, STDERR_FILENO, false, false};
  }
  if (t.size() == 1 && t[0] >= '2' && t[0] <= '9') {
    return {SinkKind::file, t[0] - '0', false, false};
  }
  if (t.front() == '/') {
    struct stat st {};
    if (::stat(std::string(t).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return try_auto_path(s, warnings);
    }
    return try_path(s, warnings);
  }
  if (t.starts_with("af_unix:")) {
    return try_unix_socket(s, warnings);
  }
  if (t == k_memory_target) {
    return {SinkKind::memory, -1, false, false};
  }
  malformed(t, warnings);
  return {};
}

}  // namespace trace2d::client::detail
