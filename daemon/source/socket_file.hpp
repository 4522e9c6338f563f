#pragma once
// Claims an AF_UNIX socket path for this daemon.
//
// A lock file beside the socket (`<path>.lock`, flock) tells a live trace2d
// from a stale socket file: when the lock is free, a leftover socket is
// removed (after checking nothing answers on it); when another trace2d holds
// it, start-up fails with that daemon's pid (db::LockFile). Files that are
// not sockets are never removed; the socket and its lock file are removed
// at exit.

#include <optional>
#include <stdexcept>
#include <string>

#include "db/lock_file.hpp"

namespace trace2d::source {

class StartupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// git needs an absolute path that fits sun_path (107 bytes and a NUL).
inline constexpr std::size_t k_max_socket_path = 107;

// Throws StartupError naming the problem.
void validate_socket_path(const std::string& path);
// A socket path setting's check: "" (no socket) or git's rules above; the
// problem ("is not absolute: ..."), or "" when fine.
[[nodiscard]] std::string socket_path_problem(const std::string& path);

class SocketFile {
 public:
  // Validates the path, creates its directory, takes the lock and clears a
  // stale socket. The caller then binds.
  explicit SocketFile(std::string path);
  ~SocketFile();
  SocketFile(const SocketFile&) = delete;
  SocketFile& operator=(const SocketFile&) = delete;

  // After binding: sets the mode and remembers the inode so that only our
  // own socket is removed at exit.
  void bound(unsigned mode);

  [[nodiscard]] const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  std::optional<db::LockFile> m_lock;
  unsigned long m_inode = 0;
  bool m_bound = false;
};

}  // namespace trace2d::source
