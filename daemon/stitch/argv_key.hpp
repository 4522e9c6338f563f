#pragma once
// A normalised form of a command line, to recognise the process a
// child_start launched: git reports `git pack-objects ...` where the child
// itself says `/usr/lib/git-core/git pack-objects ...`, and a shell command
// `git-upload-pack '/srv/repo'` where the child says `git-upload-pack /srv/repo`.
// The key is the program's base name and the arguments, '\x1f'-separated.

#include <string>
#include <vector>

#include "proto/event.hpp"

namespace trace2d::stitch {

// For a process's own argv (its `start` event).
[[nodiscard]] std::string argv_key(proto::StringList argv);

// For a child_start: with use_shell the first element is a shell command
// line, split into words as sh would (quotes and backslashes, no expansion).
[[nodiscard]] std::string child_argv_key(proto::StringList argv, bool use_shell);

// sh-style word splitting: blanks separate, '...' is literal, "..." keeps
// backslash escapes of \ " $ ` and newline, \x outside quotes is x.
[[nodiscard]] std::vector<std::string> shell_words(std::string_view command);

}  // namespace trace2d::stitch
