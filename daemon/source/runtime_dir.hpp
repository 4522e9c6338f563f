#pragma once
// The directory a socket lives in. Without XDG_RUNTIME_DIR, a user's trace2d
// falls back to <TMPDIR or /tmp>/trace2d-<uid>: a name any local user can
// predict and create first in world-writable /tmp, then fill with a symlinked
// lock file or swap the socket for their own (and read every git's argv).
// So that directory must be ours alone: created 0700, and refused when it
// is owned by another uid, is not a plain directory, or others may write it.

#include <string>

namespace trace2d::source {

// <TMPDIR or /tmp>/trace2d-<euid>: the per-user fallback runtime directory.
[[nodiscard]] std::string fallback_runtime_root();

// Creates `dir` with mode 0700 when missing, then checks it (never following
// a symlink): a directory, owned by this process's effective uid, not
// writable by group or others. Throws StartupError saying what is wrong and
// what to do.
void ensure_private_directory(const std::string& dir);

// Creates the directory `socket_dir` (and its parents) for a socket; when it
// is the fallback runtime directory or below it, that directory is made or
// checked private first.
void prepare_socket_directory(const std::string& socket_dir);

}  // namespace trace2d::source
