#include "daemon/source/listeners.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trace2d::source {
namespace {

using stream = asio::local::stream_protocol;
using dgram = asio::local::datagram_protocol;

std::string bound_path(int fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || addr.sun_family != AF_UNIX ||
      addr.sun_path[0] == '\0') {
    return {};
  }
  return std::string(addr.sun_path, ::strnlen(addr.sun_path, sizeof addr.sun_path));
}

bool is_number(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// A user or group given by name or number.
template <typename Lookup>
unsigned resolve_id(const std::string& text, const char* what, Lookup lookup) {
  if (is_number(text)) {
    return static_cast<unsigned>(std::stoul(text));
  }
  const auto id = lookup(text);
  if (!id) {
    throw StartupError(std::string("unknown ") + what + " '" + text + "'");
  }
  return *id;
}

}  // namespace

std::string socket_owner_problem(const std::string& name) {
  if (name.empty() || is_number(name) || ::getpwnam(name.c_str()) != nullptr) {
    return {};
  }
  return "is not a user of this host (getent passwd " + name + "): a name or a uid";
}

std::string socket_group_problem(const std::string& name) {
  if (name.empty() || is_number(name) || ::getgrnam(name.c_str()) != nullptr) {
    return {};
  }
  return "is not a group of this host (getent group " + name + "): a name or a gid";
}

void apply_socket_permissions(const std::string& path, const SocketOptions& options) {
  if (!options.owner.empty() || !options.group.empty()) {
    const uid_t uid = options.owner.empty()
                          ? static_cast<uid_t>(-1)
                          : resolve_id(options.owner, "user", [](const std::string& name) -> std::optional<unsigned> {
                              const passwd* pw = ::getpwnam(name.c_str());
                              return pw != nullptr ? std::optional<unsigned>(pw->pw_uid) : std::nullopt;
                            });
    const gid_t gid = options.group.empty()
                          ? static_cast<gid_t>(-1)
                          : resolve_id(options.group, "group", [](const std::string& name) -> std::optional<unsigned> {
                              const group* gr = ::getgrnam(name.c_str());
                              return gr != nullptr ? std::optional<unsigned>(gr->gr_gid) : std::nullopt;
                            });
    if (::chown(path.c_str(), uid, gid) != 0) {
      throw StartupError("cannot set owner of '" + path + "': " + std::strerror(errno));
    }
  }
}

Listeners open_listeners(asio::io_context& io, const SocketOptions& stream_options,
                         const SocketOptions& dgram_options) {
  Listeners listeners;
  // Sockets systemd passed: recognise each by its type.
  const int passed = ::sd_listen_fds(1);
  for (int i = 0; i < passed; ++i) {
    const int fd = SD_LISTEN_FDS_START + i;
    if (::sd_is_socket_unix(fd, SOCK_STREAM, 1, nullptr, 0) > 0 && !listeners.stream) {
      listeners.stream.emplace(io, stream(), fd);
      listeners.stream_path = bound_path(fd);
      listeners.stream_from_systemd = true;
    } else if (::sd_is_socket_unix(fd, SOCK_DGRAM, -1, nullptr, 0) > 0 && !listeners.dgram) {
      listeners.dgram.emplace(io, dgram(), fd);
      listeners.dgram_path = bound_path(fd);
      listeners.dgram_from_systemd = true;
    } else {
      throw StartupError("systemd passed file descriptor " + std::to_string(fd) +
                         ", which is not an AF_UNIX stream or datagram socket");
    }
  }

  if (!listeners.stream && !stream_options.path.empty()) {
    auto claim = std::make_unique<SocketFile>(stream_options.path);
    listeners.stream.emplace(io);
    listeners.stream->open();
    listeners.stream->bind(stream::endpoint(stream_options.path));
    listeners.stream->listen(asio::socket_base::max_listen_connections);
    claim->bound(stream_options.mode);
    apply_socket_permissions(stream_options.path, stream_options);
    listeners.stream_path = stream_options.path;
    listeners.claimed.push_back(std::move(claim));
  }
  if (!listeners.dgram && !dgram_options.path.empty()) {
    auto claim = std::make_unique<SocketFile>(dgram_options.path);
    listeners.dgram.emplace(io);
    listeners.dgram->open();
    listeners.dgram->bind(dgram::endpoint(dgram_options.path));
    claim->bound(dgram_options.mode);
    apply_socket_permissions(dgram_options.path, dgram_options);
    listeners.dgram_path = dgram_options.path;
    listeners.claimed.push_back(std::move(claim));
  }
  return listeners;  // possibly none: trace directories need no socket
}

}  // namespace trace2d::source
