#pragma once
// A notify socket like systemd's (NOTIFY_SOCKET): receives what a process
// sends with sd_notify, for tests of readiness and the watchdog.

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace trace2d::test {

using std::chrono::milliseconds;

// The service manager's end of sd_notify(3): a datagram socket the test
// binds and passes as NOTIFY_SOCKET.
class NotifySocket {
 public:
  explicit NotifySocket(std::string path) : m_path(std::move(path)) {
    m_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, m_path.c_str(), std::min(m_path.size() + 1, sizeof addr.sun_path));
    if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      throw std::runtime_error("cannot bind notify socket " + m_path + ": " + std::strerror(errno));
    }
  }
  ~NotifySocket() {
    ::close(m_fd);
    ::unlink(m_path.c_str());
  }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  [[nodiscard]] const std::string& path() const { return m_path; }

  // The next message, waiting at most `timeout`.
  std::optional<std::string> receive(milliseconds timeout) {
    pollfd p{m_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) {
      return std::nullopt;
    }
    char buffer[4096];
    const ssize_t n = ::recv(m_fd, buffer, sizeof buffer, 0);
    if (n < 0) {
      return std::nullopt;
    }
    m_received.emplace_back(buffer, static_cast<std::size_t>(n));
    return m_received.back();
  }

  // The first message containing `needle` within `timeout`.
  std::optional<std::string> wait_for(const std::string& needle, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (auto now = std::chrono::steady_clock::now(); now < deadline; now = std::chrono::steady_clock::now()) {
      const auto message = receive(std::chrono::duration_cast<milliseconds>(deadline - now));
      if (message && message->find(needle) != std::string::npos) {
        return message;
      }
    }
    return std::nullopt;
  }

  // How many messages containing `needle` arrive during `window`.
  int count_during(const std::string& needle, milliseconds window) {
    const auto deadline = std::chrono::steady_clock::now() + window;
    int found = 0;
    for (auto now = std::chrono::steady_clock::now(); now < deadline; now = std::chrono::steady_clock::now()) {
      const auto message = receive(std::chrono::duration_cast<milliseconds>(deadline - now));
      if (message && message->find(needle) != std::string::npos) {
        ++found;
      }
    }
    return found;
  }

  // Throws away what is queued.
  void drain() {
    while (receive(milliseconds(0))) {
    }
  }

  [[nodiscard]] std::string all_received() const {
    std::string all;
    for (const auto& m : m_received) {
      all += "[" + m + "] ";
    }
    return all;
  }

 private:
  std::string m_path;
  int m_fd = -1;
  std::vector<std::string> m_received;
};

}  // namespace trace2d::test
