#include "daemon/source/runtime_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "daemon/source/socket_file.hpp"

namespace trace2d::source {
namespace {

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::string fallback_runtime_root() {
  const char* tmp = std::getenv("TMPDIR");
  std::string root = tmp != nullptr && tmp[0] == '/' ? std::string(tmp) : std::string("/tmp");
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  return root + "/trace2d-" + std::to_string(::geteuid());
}

void ensure_private_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw StartupError("cannot create runtime directory '" + dir + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    throw StartupError("cannot inspect runtime directory '" + dir + "': " + std::strerror(errno));
  }
  const std::string advice = "; remove it, or set XDG_RUNTIME_DIR (or --socket) to a directory of your own";
  if (!S_ISDIR(st.st_mode)) {
    throw StartupError("runtime directory '" + dir + "' is not a directory (" +
                       (S_ISLNK(st.st_mode) ? "a symbolic link" : "another kind of file") +
                       "): another user may have put it there to intercept trace2d's socket" + advice);
  }
  if (st.st_uid != ::geteuid()) {
    throw StartupError("runtime directory '" + dir + "' is owned by uid " + std::to_string(st.st_uid) +
                       ", not by this user (uid " + std::to_string(::geteuid()) +
                       "): another user may have created it to intercept trace2d's socket" + advice);
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw StartupError("runtime directory '" + dir + "' has mode " + octal_mode(st.st_mode) +
                       ": group or others may write it, so they could replace trace2d's socket or lock "
                       "file; chmod 0700 it, or set XDG_RUNTIME_DIR (or --socket) to a directory of your own");
  }
}

void prepare_socket_directory(const std::string& socket_dir) {
  const std::string root = fallback_runtime_root();
  if (socket_dir == root || socket_dir.rfind(root + "/", 0) == 0) {
    ensure_private_directory(root);
  }
  std::error_code ec;
  std::filesystem::create_directories(socket_dir, ec);
  if (ec) {
    throw StartupError("cannot create directory '" + socket_dir + "': " + ec.message());
  }
}

}  // namespace trace2d::source
