#pragma once
// A normalised form of a command line, to recognise the process a
// child_start launched: git reports `git pack-objects ...` where the child
// itself says `/usr/lib/git-core/git pack-objects ...`, and a shell command
// `git-upload-pack '/srv/repo'` where the child says `git-upload-pack /srv/repo`.
// The key is the program's base name and the arguments, '\x1f'-separated.
//
// A key is held in memory for every live session and stored twice (the
// session's and the child's), and an argv can be megabytes long: a key
// longer than k_max_argv_key_bytes is its first bytes, '\x1e', and the
// FNV-1a digest of the whole key in 16 hex digits. Both sides shorten the
// same way, so a child still matches the session it ran whatever its
// length. The bound is fixed, not a setting: keys stored by one daemon are
// compared with keys stored by another. (A crafted digest collision only
// mislinks the crafter's own processes: children match within their
// parent's tree, which only its owner can hang processes under.)

#include <cstddef>
#include <string>
#include <vector>

#include "proto/event.hpp"

namespace trace2d::stitch {

// Real git keys are far shorter; a `git add` of a few hundred paths fits.
inline constexpr std::size_t k_max_argv_key_bytes = 4096;

// For a process's own argv (its `start` event).
[[nodiscard]] std::string argv_key(proto::StringList argv);

// For a child_start: with use_shell the first element is a shell command
// line, split into words as sh would (quotes and backslashes, no expansion).
[[nodiscard]] std::string child_argv_key(proto::StringList argv, bool use_shell);

// sh-style word splitting: blanks separate, '...' is literal, "..." keeps
// backslash escapes of \ " $ ` and newline, \x outside quotes is x.
[[nodiscard]] std::vector<std::string> shell_words(std::string_view command);

}  // namespace trace2d::stitch
