// The raw drain limit: the least a collector must do with the benchmark's
// bytes, which is read them. One thread, no parsing, no storage: it counts
// '\n' and throws the bytes away. ingest_bench runs it in trace2d's place with
// the same writers, so events/s here is the ceiling the machine puts on
// reading alone (writers and reader share the cores).
//
//   drain_reader --stream PATH | --dgram PATH | --dir PATH  --expect LINES
//
// --stream: epoll over a listening AF_UNIX stream socket and its connections.
// --dgram:  blocking recvmmsg on an AF_UNIX datagram socket (16 messages of
//           up to 256 KiB per call, the receive buffer raised as trace2d does).
// --dir:    inotify on a directory; every file moved or written into it is
//           read whole and removed.
// Prints "ready" once listening, then, after LINES lines,
// "done lines=N last_ns=T" (T: CLOCK_MONOTONIC when the last line was read).

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/support.hpp"

namespace {

using trace2d::bench::Fd;

constexpr std::size_t k_read_bytes = 256 * 1024;
constexpr int k_dgram_batch = 16;
constexpr int k_dgram_receive_buffer = 8 * 1024 * 1024;  // trace2d's default request

std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Drained {
  std::int64_t lines = 0;
  std::int64_t last_ns = 0;  // CLOCK_MONOTONIC when the last line was read
};

std::int64_t count_lines(const char* data, std::size_t size) {
  return static_cast<std::int64_t>(std::count(data, data + size, '\n'));
}

sockaddr_un address_of(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    throw std::runtime_error("socket path too long: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

void check(bool ok, const char* what) {
  if (!ok) {
    throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
  }
}

void ready() {
  std::printf("ready\n");
  std::fflush(stdout);
}

Drained drain_stream(const std::string& path, std::int64_t expect) {
  const sockaddr_un addr = address_of(path);
  ::unlink(path.c_str());
  const Fd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  check(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0, "bind");
  check(::listen(listener.get(), SOMAXCONN) == 0, "listen");
  const Fd epoll(::epoll_create1(EPOLL_CLOEXEC));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = listener.get();
  check(::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, listener.get(), &event) == 0, "epoll_ctl");
  ready();
  std::vector<char> buffer(k_read_bytes);
  std::array<epoll_event, 256> events{};
  std::int64_t lines = 0;
  std::int64_t last_ns = 0;
  while (lines < expect) {
    const int n = ::epoll_wait(epoll.get(), events.data(), static_cast<int>(events.size()), -1);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    check(n >= 0, "epoll_wait");
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<std::size_t>(i)].data.fd;
      if (fd == listener.get()) {
        int client = -1;
        while ((client = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
          epoll_event add{};
          add.events = EPOLLIN;
          add.data.fd = client;
          check(::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, client, &add) == 0, "epoll_ctl");
        }
        continue;
      }
      // Everything the kernel holds for this connection, then the next one.
      while (true) {
        const ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got > 0) {
          lines += count_lines(buffer.data(), static_cast<std::size_t>(got));
          last_ns = monotonic_ns();
          continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
          break;
        }
        ::close(fd);  // EOF or error; closing removes it from the epoll set
        break;
      }
    }
  }
  return Drained{lines, last_ns};
}

Drained drain_dgram(const std::string& path, std::int64_t expect) {
  const sockaddr_un addr = address_of(path);
  ::unlink(path.c_str());
  const Fd socket(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  check(::bind(socket.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0, "bind");
  // As trace2d does: FORCE when permitted (root), else capped by rmem_max.
  if (::setsockopt(socket.get(), SOL_SOCKET, SO_RCVBUFFORCE, &k_dgram_receive_buffer,
                   sizeof k_dgram_receive_buffer) != 0) {
    ::setsockopt(socket.get(), SOL_SOCKET, SO_RCVBUF, &k_dgram_receive_buffer, sizeof k_dgram_receive_buffer);
  }
  ready();
  std::vector<char> buffer(k_read_bytes * k_dgram_batch);
  std::array<iovec, k_dgram_batch> iov{};
  std::array<mmsghdr, k_dgram_batch> messages{};
  std::int64_t lines = 0;
  std::int64_t last_ns = 0;
  while (lines < expect) {
    for (int i = 0; i < k_dgram_batch; ++i) {
      const auto at = static_cast<std::size_t>(i);
      iov[at] = iovec{buffer.data() + at * k_read_bytes, k_read_bytes};
      messages[at] = mmsghdr{};
      messages[at].msg_hdr.msg_iov = &iov[at];
      messages[at].msg_hdr.msg_iovlen = 1;
    }
    const int n = ::recvmmsg(socket.get(), messages.data(), k_dgram_batch, MSG_WAITFORONE, nullptr);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    check(n >= 0, "recvmmsg");
    for (int i = 0; i < n; ++i) {
      const auto at = static_cast<std::size_t>(i);
      lines += count_lines(buffer.data() + at * k_read_bytes, messages[at].msg_len);
    }
    last_ns = monotonic_ns();
  }
  return Drained{lines, last_ns};
}

std::int64_t drain_file(const std::string& path, std::vector<char>& buffer) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) {
    return 0;
  }
  std::int64_t lines = 0;
  ssize_t got = 0;
  while ((got = ::read(fd.get(), buffer.data(), buffer.size())) > 0) {
    lines += count_lines(buffer.data(), static_cast<std::size_t>(got));
  }
  ::unlink(path.c_str());
  return lines;
}

Drained drain_dir(const std::string& dir, std::int64_t expect) {
  const Fd inotify(::inotify_init1(IN_CLOEXEC));
  check(inotify.valid(), "inotify_init1");
  check(::inotify_add_watch(inotify.get(), dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) >= 0, "inotify_add_watch");
  ready();
  std::vector<char> buffer(k_read_bytes);
  std::int64_t lines = 0;
  std::int64_t last_ns = 0;
  // Files already there when the watch began.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    lines += drain_file(entry.path().string(), buffer);
    last_ns = monotonic_ns();
  }
  std::vector<char> events(64 * 1024);
  while (lines < expect) {
    const ssize_t got = ::read(inotify.get(), events.data(), events.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    check(got > 0, "read inotify");
    for (ssize_t at = 0; at < got;) {
      inotify_event header{};
      std::memcpy(&header, events.data() + at, sizeof header);
      if (header.len > 0) {
        const char* name = events.data() + at + static_cast<ssize_t>(sizeof header);
        lines += drain_file(dir + "/" + name, buffer);
        last_ns = monotonic_ns();
      }
      at += static_cast<ssize_t>(sizeof header + header.len);
    }
  }
  return Drained{lines, last_ns};
}

}  // namespace

int main(int argc, char** argv) {
  std::string stream_path;
  std::string dgram_path;
  std::string dir_path;
  std::int64_t expect = 0;
  CLI::App cli{"Reads lines into /dev/null as fast as the kernel hands them over (the raw drain limit)."};
  auto* stream = cli.add_option("--stream", stream_path, "Listen on this AF_UNIX stream socket");
  auto* dgram = cli.add_option("--dgram", dgram_path, "Receive on this AF_UNIX datagram socket");
  auto* dir = cli.add_option("--dir", dir_path, "Drain files arriving in this directory");
  stream->excludes(dgram)->excludes(dir);
  dgram->excludes(dir);
  cli.add_option("--expect", expect, "Lines to read before reporting and exiting")->required();
  CLI11_PARSE(cli, argc, argv);
  try {
    Drained drained;
    if (!stream_path.empty()) {
      drained = drain_stream(stream_path, expect);
    } else if (!dgram_path.empty()) {
      drained = drain_dgram(dgram_path, expect);
    } else if (!dir_path.empty()) {
      drained = drain_dir(dir_path, expect);
    } else {
      std::fprintf(stderr, "drain_reader: give --stream, --dgram or --dir\n");
      return 2;
    }
    std::printf("done lines=%lld last_ns=%lld\n", static_cast<long long>(drained.lines),
                static_cast<long long>(drained.last_ns));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "drain_reader: %s\n", e.what());
    return 1;
  }
}
