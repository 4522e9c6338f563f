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

// One git-shaped event line (with '\n') for tests that need many of them.
std::string event_line(const std::string& sid, const std::string& event, int n = 0);

}  // namespace trace2d::test
