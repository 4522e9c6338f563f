#pragma once
// An exclusive lock held through a file: flock() on `<something>.lock`,
// with the holder's pid written in it for the message a second claimant
// gets. The lock (not the file) is what counts: the kernel drops it when its
// holder dies, so a file left by a crash is simply taken over.
//
// The file is created if missing, never through a symbolic link, and an
// existing one must be a regular file of this user with one link: the
// directory may be shared (a runtime or state directory), and a planted
// name must not make us write into, or lock, a file of someone else's
// choosing. The holder removes the file when it lets go.

#include <sys/types.h>

#include <optional>
#include <stdexcept>
#include <string>

namespace trace2d::db {

// The lock file could not be opened, checked or locked.
class LockFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Another process holds the lock.
class LockHeld : public LockFileError {
 public:
  LockHeld(const std::string& path, std::optional<pid_t> holder);
  [[nodiscard]] std::optional<pid_t> holder() const { return m_holder; }
  // "pid 1234", or "pid unknown" when the file does not say.
  [[nodiscard]] std::string holder_text() const;

 private:
  std::optional<pid_t> m_holder;
};

class LockFile {
 public:
  // Takes the lock without waiting. Throws LockHeld when another process
  // holds it, LockFileError for anything else.
  explicit LockFile(std::string path);
  // Removes the file (only if it is still ours), then lets go.
  ~LockFile();
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;
  LockFile(LockFile&& other) noexcept;
  LockFile& operator=(LockFile&& other) noexcept;

  [[nodiscard]] const std::string& path() const { return m_path; }

 private:
  void release() noexcept;

  std::string m_path;
  int m_fd = -1;
};

}  // namespace trace2d::db
