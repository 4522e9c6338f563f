#pragma once
// A Trace2 target as git reads it from GIT_TRACE2_EVENT or
// trace2.eventTarget, and what git does with it: the rules of git's
// trace2/tr2_dst.c, so that `trace2ctl doctor` can say why nothing arrives.

#include <string>
#include <string_view>

namespace trace2d::ctl::doctor {

struct TraceTarget {
  enum class Kind {
    off,            // "", "0", "false": tracing off
    standard_error, // "1", "true"
    descriptor,     // "2".."9": an open file descriptor
    socket,         // af_unix:[stream:|dgram:]PATH
    path,           // an absolute path: a directory (a file per process) or a file
    invalid,        // anything else: git warns once and traces nothing
  };
  enum class SocketType { any, stream, dgram };  // any: git tries stream, then dgram

  Kind kind = Kind::off;
  SocketType socket_type = SocketType::any;
  std::string path;  // for socket and path
  std::string why;   // for invalid: what git makes of it
};

[[nodiscard]] TraceTarget parse_trace_target(std::string_view value);

}  // namespace trace2d::ctl::doctor
