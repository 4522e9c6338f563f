#pragma once
// A plain blocking AF_UNIX client, like git's: one write() per line.

#include <string>
#include <string_view>

namespace trace2d::test {

class SocketClient {
 public:
  // Connects to a stream socket (throws on failure).
  explicit SocketClient(const std::string& path);
  ~SocketClient();
  SocketClient(const SocketClient&) = delete;
  SocketClient& operator=(const SocketClient&) = delete;

  // Writes all of `bytes`; false on error (EPIPE after the server closed...).
  bool send(std::string_view bytes);
  void close();
  [[nodiscard]] int fd() const { return m_fd; }

 private:
  int m_fd = -1;
};

// A connected AF_UNIX datagram client: one send() per datagram, blocking
// when the receiver's queue is full, as git's is.
class DgramClient {
 public:
  explicit DgramClient(const std::string& path);
  ~DgramClient();
  DgramClient(const DgramClient&) = delete;
  DgramClient& operator=(const DgramClient&) = delete;
  bool send(std::string_view datagram);

 private:
  int m_fd = -1;
};

// One git-shaped event line (with '\n') for tests that need many of them.
std::string event_line(const std::string& sid, const std::string& event, int n = 0);

}  // namespace trace2d::test
