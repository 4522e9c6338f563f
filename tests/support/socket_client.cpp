#include "tests/support/socket_client.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace trace2d::test {

SocketClient::SocketClient(const std::string& path) {
  m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    throw std::runtime_error("socket path too long");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (m_fd < 0 || ::connect(m_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const std::string why = std::strerror(errno);
    close();
    throw std::runtime_error("cannot connect to " + path + ": " + why);
  }
}

SocketClient::~SocketClient() { close(); }

bool SocketClient::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(m_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void SocketClient::close() {
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
}

DgramClient::DgramClient(const std::string& path) {
  m_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (m_fd < 0 || ::connect(m_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error("cannot connect to " + path + ": " + std::strerror(errno));
  }
}

DgramClient::~DgramClient() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

bool DgramClient::send(std::string_view datagram) {
  while (true) {
    if (::send(m_fd, datagram.data(), datagram.size(), 0) >= 0) {
      return true;
    }
    if (errno != EINTR) {
      return false;
    }
  }
}

std::string event_line(const std::string& sid, const std::string& event, int n) {
  std::string line = R"({"event":")" + event + R"(","sid":")" + sid +
                     R"(","thread":"main","time":"2026-11-21T10:00:00.)" +
                     std::to_string(100000 + n) + R"(Z","file":"test.c","line":)" +
                     std::to_string(n);
  if (event == "atexit" || event == "exit") {
    line += R"(,"t_abs":0.5,"code":0)";
  } else if (event == "start") {
    line += R"(,"t_abs":0.001,"argv":["git","test"])";
  } else if (event == "version") {
    line += R"(,"evt":"3","exe":"2.39.5")";
  } else if (event == "data") {
    line += R"(,"t_abs":0.1,"t_rel":0.1,"nesting":1,"category":"test","key":"n","value":")" +
            std::to_string(n) + "\"";
  }
  return line + "}\n";
}

}  // namespace trace2d::test
