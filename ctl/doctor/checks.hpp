#pragma once
// `trace2ctl doctor`: why nothing arrives. Reads where git sends its
// events (GIT_TRACE2_EVENT, trace2.eventTarget at each scope), as git
// itself decides, and checks that trace2d listens there.

#include <optional>
#include <string>
#include <vector>

#include "ctl/doctor/trace_target.hpp"

namespace trace2d::ctl::doctor {

struct Finding {
  enum class Verdict { ok, note, problem };
  Verdict verdict = Verdict::ok;
  std::string check;   // what was looked at: "target", "socket", ...
  std::string detail;  // what was found
  std::string fix;     // what to do, for a problem (and some notes)
};

// Where git would look, read from this process's environment and git's
// configuration (the `git` on PATH); nullopt: not set there.
struct GitSettings {
  std::optional<std::string> environment;  // GIT_TRACE2_EVENT
  std::optional<std::string> system;       // trace2.eventTarget, --system
  std::optional<std::string> global;       // ... --global
  std::optional<std::string> local;        // ... in the repository here (git ignores it)
  bool system_ignored = false;             // GIT_CONFIG_NOSYSTEM
  std::string git_problem;                 // git could not be run: why
};

[[nodiscard]] GitSettings read_git_settings();

// How a connection to a socket path went.
enum class SocketProbe { listening, missing, not_a_socket, refused, denied, wrong_type, failed };
struct SocketState {
  SocketProbe probe = SocketProbe::failed;
  TraceTarget::SocketType type = TraceTarget::SocketType::stream;  // the type that answered, when listening
  std::string error;                                               // for failed
};
[[nodiscard]] SocketState probe_socket(const std::string& path, TraceTarget::SocketType type);

// The findings about `settings`; `default_socket` is where a trace2d run by
// this user (or the system service) listens, for the fixes.
[[nodiscard]] std::vector<Finding> check_git_settings(const GitSettings& settings, const std::string& default_socket);

}  // namespace trace2d::ctl::doctor
