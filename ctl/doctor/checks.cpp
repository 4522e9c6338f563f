#include "ctl/doctor/checks.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace trace2d::ctl::doctor {
namespace {

using Verdict = Finding::Verdict;

// `git config <scope> --get trace2.eventTarget`: the value, nullopt when it
// is not set there; `problem` says why git could not tell.
std::optional<std::string> git_config(const char* scope, std::string& problem) {
  // A fixed command line: nothing of the user's goes through the shell.
  // Untraced: this git must not send events to the very target under
  // examination (a datagram socket nobody reads would block it).
  const std::string command = std::string("GIT_TRACE2_EVENT=0 GIT_TRACE2=0 GIT_TRACE2_PERF=0 git config ") + scope +
                              " --get trace2.eventTarget 2>/dev/null";
  FILE* raw = popen(command.c_str(), "r");
  if (raw == nullptr) {
    problem = std::string("cannot run git: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::string out;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), raw) != nullptr) {
    out += buffer.data();
  }
  const int status = pclose(raw);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0) {
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) {
      out.pop_back();
    }
    return out;
  }
  if (code == 127) {
    problem = "no `git` on PATH";
  }
  return std::nullopt;  // 1: not set; 128 (--local outside a repository): none
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

// What git does with the target it uses, and whether trace2d is behind it.
void check_target(const TraceTarget& target, const std::string& default_socket, std::vector<Finding>& out) {
  const std::string use = "export GIT_TRACE2_EVENT=af_unix:stream:" + default_socket +
                          " (or git config --global trace2.eventTarget af_unix:stream:" + default_socket + ")";
  switch (target.kind) {
    case TraceTarget::Kind::off:
      out.push_back({Verdict::problem, "target", "the value turns tracing off", use});
      return;
    case TraceTarget::Kind::standard_error:
    case TraceTarget::Kind::descriptor:
      out.push_back({Verdict::problem, "target",
                     "git writes its events to a file descriptor of its own (standard error for 1 or true), "
                     "not to trace2d",
                     use});
      return;
    case TraceTarget::Kind::invalid:
      out.push_back({Verdict::problem, "target", target.why, use});
      return;
    case TraceTarget::Kind::path: {
      struct stat st{};
      if (::stat(target.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
        out.push_back({Verdict::problem, "target",
                       target.path + " is a socket, but without the af_unix: prefix git opens it as a file, "
                                     "fails, and traces nothing",
                       "GIT_TRACE2_EVENT=af_unix:" + target.path});
        return;
      }
      if (::stat(target.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        if (::access(target.path.c_str(), W_OK | X_OK) != 0) {
          out.push_back({Verdict::problem, "directory",
                         "git writes a file per process into " + target.path + ", but you may not create files "
                         "there (" + std::strerror(errno) + ")",
                         "make it writable for you (the shipped /var/log/git-trace2 is mode 1733), or " + use});
          return;
        }
        out.push_back({Verdict::note, "directory",
                       "git writes a file per process into " + target.path +
                           "; trace2d reads them only if it watches that directory",
                       "trace2d --watch " + target.path + " (or watch = [\"" + target.path +
                           "\"] under [directories] in its configuration)"});
        return;
      }
      out.push_back({Verdict::problem, "target",
                     "git appends every process's events to the file " + target.path +
                         ", which trace2d reads only in a directory it watches (as a log every git appends to, "
                         "kept for good)",
                     use + ", or a directory trace2d watches"});
      return;
    }
    case TraceTarget::Kind::socket:
      break;
  }
  const SocketState state = probe_socket(target.path, target.socket_type);
  switch (state.probe) {
    case SocketProbe::listening:
      out.push_back({Verdict::ok, "socket",
                     target.path + " takes connections (a " +
                         (state.type == TraceTarget::SocketType::dgram ? "datagram" : "stream") +
                         " socket): something listens there, trace2d if it is the socket trace2d printed",
                     ""});
      return;
    case SocketProbe::missing:
      out.push_back({Verdict::problem, "socket",
                     "there is no socket at " + target.path + ": trace2d is not running, or listens elsewhere",
                     "start it (sudo systemctl start trace2d.socket trace2d.service, or run trace2d, which prints "
                     "the GIT_TRACE2_EVENT value to use)"});
      return;
    case SocketProbe::not_a_socket:
      out.push_back({Verdict::problem, "socket", target.path + " is not a socket", use});
      return;
    case SocketProbe::refused:
      out.push_back({Verdict::problem, "socket",
                     "nothing listens on " + target.path + ": a socket file left by a trace2d that stopped",
                     "start trace2d again (sudo systemctl start trace2d.socket trace2d.service)"});
      return;
    case SocketProbe::denied:
      out.push_back({Verdict::problem, "socket",
                     "you may not connect to " + target.path + " (its mode or a directory above it shuts you out)",
                     "the system service's socket is open to every user (mode 0666, in /run/trace2d, mode 0755): "
                     "check the mode of the socket and its directories"});
      return;
    case SocketProbe::wrong_type:
      out.push_back({Verdict::problem, "socket",
                     target.path + " is a " +
                         (target.socket_type == TraceTarget::SocketType::stream ? "datagram" : "stream") +
                         " socket, but the value asks for the other kind",
                     "GIT_TRACE2_EVENT=af_unix:" + target.path + " (git then finds the kind itself)"});
      return;
    case SocketProbe::failed:
      out.push_back({Verdict::problem, "socket", "connecting to " + target.path + " failed: " + state.error, ""});
      return;
  }
}

}  // namespace

GitSettings read_git_settings() {
  GitSettings settings;
  if (const char* value = std::getenv("GIT_TRACE2_EVENT")) {
    settings.environment = value;
  }
  if (const char* value = std::getenv("GIT_CONFIG_NOSYSTEM"); value != nullptr && *value != '\0') {
    settings.system_ignored = true;
  }
  settings.system = git_config("--system", settings.git_problem);
  settings.global = git_config("--global", settings.git_problem);
  settings.local = git_config("--local", settings.git_problem);
  return settings;
}

SocketState probe_socket(const std::string& path, TraceTarget::SocketType type) {
  SocketState state;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    state.probe = errno == EACCES ? SocketProbe::denied : SocketProbe::missing;
    return state;
  }
  if (!S_ISSOCK(st.st_mode)) {
    state.probe = SocketProbe::not_a_socket;
    return state;
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    state.error = "the path is longer than a socket address holds";
    return state;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  // As git: a stream connection first, then a datagram one, unless the
  // value names the kind.
  std::vector<TraceTarget::SocketType> kinds;
  if (type != TraceTarget::SocketType::dgram) {
    kinds.push_back(TraceTarget::SocketType::stream);
  }
  if (type != TraceTarget::SocketType::stream) {
    kinds.push_back(TraceTarget::SocketType::dgram);
  }
  for (const TraceTarget::SocketType kind : kinds) {
    const int fd = ::socket(AF_UNIX, (kind == TraceTarget::SocketType::stream ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      state.error = std::strerror(errno);
      return state;
    }
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    const int error = errno;
    ::close(fd);
    if (rc == 0) {
      state.probe = SocketProbe::listening;
      state.type = kind;
      return state;
    }
    if (error == EPROTOTYPE) {
      state.probe = SocketProbe::wrong_type;
      continue;  // the other kind, if allowed
    }
    state.probe = error == ECONNREFUSED ? SocketProbe::refused
                  : error == EACCES     ? SocketProbe::denied
                                        : SocketProbe::failed;
    state.error = std::strerror(error);
    return state;
  }
  return state;
}

std::vector<Finding> check_git_settings(const GitSettings& settings, const std::string& default_socket) {
  std::vector<Finding> out;
  if (!settings.git_problem.empty()) {
    out.push_back({Verdict::problem, "git", settings.git_problem, "install git, or put it on PATH"});
  }
  if (settings.local) {
    out.push_back({Verdict::note, "config",
                   "this repository's config sets trace2.eventTarget = " + quoted(*settings.local) +
                       ", which git ignores: it reads Trace2 settings from the system and global config only",
                   "git config --global trace2.eventTarget " + *settings.local});
  }
  // git's own order: the environment wins, then the global config, then the system's.
  std::optional<std::string> value;
  std::string from;
  const std::optional<std::string> system = settings.system_ignored ? std::nullopt : settings.system;
  if (settings.system && settings.system_ignored) {
    out.push_back({Verdict::note, "config",
                   "GIT_CONFIG_NOSYSTEM is set: git ignores the system config's trace2.eventTarget = " +
                       quoted(*settings.system),
                   ""});
  }
  if (settings.environment) {
    value = settings.environment;
    from = "GIT_TRACE2_EVENT in the environment";
    for (const auto& [scope, setting] : {std::pair{"global", settings.global}, std::pair{"system", system}}) {
      if (setting && *setting != *value) {
        out.push_back({Verdict::note, "config",
                       std::string("the ") + scope + " config's trace2.eventTarget = " + quoted(*setting) +
                           " is not used: the environment wins",
                       ""});
      }
    }
  } else if (settings.global) {
    value = settings.global;
    from = "trace2.eventTarget in the global config";
  } else if (system) {
    value = system;
    from = "trace2.eventTarget in the system config";
  }
  if (!value) {
    out.push_back({Verdict::problem, "target",
                   "git traces nothing: neither GIT_TRACE2_EVENT nor trace2.eventTarget (system or global config) "
                   "is set",
                   "export GIT_TRACE2_EVENT=af_unix:stream:" + default_socket + " (this shell), or git config "
                   "--global trace2.eventTarget af_unix:stream:" + default_socket + " (every repository of yours)"});
    return out;
  }
  out.push_back({Verdict::note, "target", "git uses " + quoted(*value) + " (" + from + ")", ""});
  check_target(parse_trace_target(*value), default_socket, out);
  return out;
}

}  // namespace trace2d::ctl::doctor
