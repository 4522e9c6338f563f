// t2d_line_sender SOCKET [HOLD_MS]: connects to a trace2d stream socket,
// writes all of its standard input there, keeps the connection open for
// HOLD_MS more (a sender whose sessions stay `running`), and exits 0. The
// e2e tests run it as another user (`nobody`) to play a hostile local user.

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s SOCKET [HOLD_MS]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const long hold_ms = argc == 3 ? std::strtol(argv[2], nullptr, 10) : 0;
  const std::string data((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());

  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    std::fprintf(stderr, "socket path too long\n");
    return 2;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    std::fprintf(stderr, "connect %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::write(fd, data.data() + sent, data.size() - sent);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      std::fprintf(stderr, "write: %s\n", std::strerror(errno));
      return 1;
    }
    sent += static_cast<std::size_t>(n);
  }
  std::printf("%zu\n", sent);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  ::close(fd);
  return 0;
}
