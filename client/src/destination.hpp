#pragma once
// Opening GIT_TRACE2_EVENT's target with git's rules (trace2/tr2_dst.c):
//   unset, "", "0", "false"  off
//   "1", "true"              stderr
//   "2".."9"                 that file descriptor
//   /abs/dir (existing)      a new file per process named after the SID's
//                            last component (O_EXCL; ".1".."9" on a clash),
//                            honouring GIT_TRACE2_MAX_FILES
//   /abs/path                a file, appended to
//   memory:                  (the library's own) kept in memory, see Sink
//   af_unix:[stream:|dgram:]/abs/socket
//                            a Unix socket; the bare form falls back to
//                            datagram only when the stream connect fails
//                            with EPROTOTYPE
// An unknown value warns on stderr as git does; other failures warn only
// with GIT_TRACE2_DST_DEBUG, in git's words (checked against git 2.39). Unlike git, connecting
// never blocks (a full accept backlog turns tracing off instead).

#include <optional>
#include <string>
#include <string_view>

namespace trace2d::client::detail {

// memory: the program's own "memory:" target (no git syntax): lines kept in
// the process for its unit tests (Sink::take_memory).
enum class SinkKind { none, stream, dgram, file, memory };

inline constexpr std::string_view k_memory_target = "memory:";

struct Destination {
  SinkKind kind = SinkKind::none;
  int fd = -1;
  bool owned = false;           // opened here: close it
  bool too_many_files = false;  // the git-trace2-discard sentinel: only
                                // version and too_many_files go there
};

struct TargetSettings {
  std::string_view target;     // GIT_TRACE2_EVENT, or the program's choice
  std::string_view sid;        // for a directory target
  bool debug = false;          // GIT_TRACE2_DST_DEBUG
  std::string_view max_files;  // GIT_TRACE2_MAX_FILES
};

// Opens the destination, appending git's warnings (each ending in '\n') to
// `warnings`. kind none means tracing is off.
[[nodiscard]] Destination open_destination(const TargetSettings& settings, std::string& warnings);

// git_parse_maybe_bool(): 1, 0, or nullopt when not a boolean.
[[nodiscard]] std::optional<bool> parse_git_bool(std::string_view text);

}  // namespace trace2d::client::detail
