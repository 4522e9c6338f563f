#pragma once
// The listening sockets: passed in by systemd (socket activation,
// sd_listen_fds) or bound here. A socket file this process bound is
// claimed (SocketFile: lock, stale check) and removed at exit; sockets from
// systemd belong to systemd and are left alone.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/source/socket_options.hpp"
#include "daemon/source/asio.hpp"
#include "daemon/source/socket_file.hpp"

namespace trace2d::source {

struct Listeners {
  std::optional<asio::local::stream_protocol::acceptor> stream;
  std::optional<asio::local::datagram_protocol::socket> dgram;
  std::string stream_path;  // where git connects: from the socket itself
  std::string dgram_path;
  bool stream_from_systemd = false;
  bool dgram_from_systemd = false;
  std::vector<std::unique_ptr<SocketFile>> claimed;
};

// Takes sockets systemd passed (LISTEN_FDS), then binds what is configured
// but was not passed (an empty path: none). Throws StartupError naming the
// problem.
[[nodiscard]] Listeners open_listeners(asio::io_context& io, const SocketOptions& stream,
                                       const SocketOptions& dgram);

// Applies owner, group and mode to a socket file (names or numeric ids).
void apply_socket_permissions(const std::string& path, const SocketOptions& options);

}  // namespace trace2d::source
