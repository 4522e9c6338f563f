// A loopback OTLP/HTTP receiver that discards: it reads each request whole
// (headers and Content-Length bytes), answers 200 with an empty
// ExportTraceServiceResponse (no partial_success: an empty body), and counts
// requests and bytes. What the export benchmark measures is then trace2d's
// side alone: no decoding, no storage.
//
//   otlp_sink [--port N]       prints "port=N" once listening;
//             [--save FILE]    appends each request's body to FILE, as
//                              received (to compare two trace2d's requests
//                              byte for byte);
//                              on SIGTERM/SIGINT "SINK requests=N bytes=N"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};
std::atomic<long long> g_requests{0};
std::atomic<long long> g_bytes{0};

std::mutex g_save_mutex;
std::ofstream g_save;  // open with --save

void on_signal(int) { g_stop.store(true); }

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n <= 0) {
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Content-Length of a header block ("" keys compared case-insensitively).
long long content_length(std::string_view headers) {
  constexpr std::string_view key = "content-length:";
  for (std::size_t at = 0; at < headers.size();) {
    const std::size_t end = headers.find("\r\n", at);
    const std::string_view line = headers.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (line.size() > key.size() && strncasecmp(line.data(), key.data(), key.size()) == 0) {
      return std::atoll(std::string(line.substr(key.size())).c_str());
    }
    if (end == std::string_view::npos) {
      break;
    }
    at = end + 2;
  }
  return 0;
}

void serve(int fd) {
  static constexpr std::string_view k_answer =
      "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
  std::string buffer;
  std::vector<char> chunk(1 << 20);
  while (!g_stop.load()) {
    const std::size_t head_end = buffer.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const long long length = content_length(std::string_view(buffer).substr(0, head_end + 2));
      const std::size_t total = head_end + 4 + static_cast<std::size_t>(length);
      if (buffer.size() >= total) {
        g_requests.fetch_add(1);
        g_bytes.fetch_add(length);
        if (g_save.is_open()) {
          const std::lock_guard lock(g_save_mutex);
          g_save.write(buffer.data() + head_end + 4, static_cast<std::streamsize>(length));
          g_save.flush();
        }
        buffer.erase(0, total);
        if (!write_all(fd, k_answer)) {
          break;
        }
        continue;
      }
    }
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n <= 0) {
      break;
    }
    buffer.append(chunk.data(), static_cast<std::size_t>(n));
  }
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--port") {
      port = std::atoi(argv[i + 1]);
    } else if (std::string_view(argv[i]) == "--save") {
      g_save.open(argv[i + 1], std::ios::binary | std::ios::trunc);
      if (!g_save) {
        std::perror("otlp_sink: --save");
        return 1;
      }
    }
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 64) != 0) {
    std::perror("otlp_sink: listen");
    return 1;
  }
  socklen_t size = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size);
  std::printf("port=%d\n", ntohs(address.sin_port));
  std::fflush(stdout);
  std::vector<std::thread> connections;
  while (!g_stop.load()) {
    pollfd p{listener, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) {
      continue;
    }
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      connections.emplace_back(serve, fd);
    }
  }
  ::close(listener);
  for (std::thread& t : connections) {
    t.detach();  // blocked in read() on a kept-alive connection: the exit ends it
  }
  std::printf("SINK requests=%lld bytes=%lld\n", g_requests.load(), g_bytes.load());
  std::fflush(stdout);
  return 0;
}
