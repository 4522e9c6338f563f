#include "bench/writers.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "proto/timestamp.hpp"

namespace trace2d::bench {
namespace {

constexpr std::string_view k_time_key = "\"time\":\"";
constexpr std::size_t k_time_size = 27;  // 2026-11-21T10:00:00.000000Z

class Pacer {
 public:
  Pacer(const Pace& pace, int clients) : m_slack(pace.slack), m_start(Clock::now()) {
    if (pace.events_per_second > 0) {
      m_interval = std::chrono::duration<double>(static_cast<double>(clients) / pace.events_per_second);
    }
  }
  [[nodiscard]] bool active() const { return m_interval.count() > 0; }
  // Waits until the next event is due.
  void next() {
    if (!active()) {
      return;
    }
    const auto due = m_start + std::chrono::duration_cast<Clock::duration>(m_interval * m_sent++);
    if (due - Clock::now() > m_slack) {
      std::this_thread::sleep_until(due);
    }
  }

 private:
  std::chrono::duration<double> m_interval{0};
  std::chrono::microseconds m_slack;
  Clock::time_point m_start;
  std::int64_t m_sent = 0;
};

}  // namespace

bool stamp_time(std::string& line, std::int64_t unix_us) {
  const auto at = line.find(k_time_key);
  if (at == std::string::npos || line.size() < at + k_time_key.size() + k_time_size) {
    return false;
  }
  thread_local std::string text;
  text.clear();
  proto::append_utc_timestamp(text, unix_us);
  if (text.size() != k_time_size) {
    return false;
  }
  line.replace(at + k_time_key.size(), k_time_size, text);
  return true;
}

WriteStats run_stream_writers(Payload& payload, const std::string& socket, const Pace& pace) {
  std::atomic<std::int64_t> failed{0};
  std::atomic<std::int64_t> stamped{0};
  const int clients = static_cast<int>(payload.clients.size());
  std::vector<std::thread> threads;
  for (auto& connections : payload.clients) {
    threads.emplace_back([&, clients] {
      Pacer pacer(pace, clients);
      std::int64_t my_failed = 0;
      std::int64_t my_stamped = 0;
      for (Connection& connection : connections) {
        const Fd fd = connect_stream(socket);
        for (std::string& line : connection.lines) {
          pacer.next();
          if (pacer.active()) {
            my_stamped += stamp_time(line, proto::unix_now_us()) ? 1 : 0;
          }
          if (!send_all(fd.get(), line.data(), line.size())) {
            ++my_failed;
          }
        }
      }
      failed.fetch_add(my_failed);
      stamped.fetch_add(my_stamped);
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  return WriteStats{failed.load(), stamped.load()};
}

WriteStats run_dgram_writers(const Payload& payload, const std::string& socket) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket.c_str(), std::min(socket.size() + 1, sizeof addr.sun_path - 1));
  std::atomic<std::int64_t> failed{0};
  std::vector<std::thread> threads;
  for (const auto& connections : payload.clients) {
    threads.emplace_back([&] {
      std::int64_t my_failed = 0;
      for (const Connection& connection : connections) {
        // As git does: a connected datagram socket per process, blocking
        // writes (a full receive queue makes git wait).
        const Fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
          my_failed += static_cast<std::int64_t>(connection.lines.size());
          continue;
        }
        for (const std::string& line : connection.lines) {
          ssize_t n = -1;
          do {
            n = ::send(fd.get(), line.data(), line.size(), MSG_NOSIGNAL);
          } while (n < 0 && errno == EINTR);
          if (n != static_cast<ssize_t>(line.size())) {
            ++my_failed;
          }
        }
      }
      failed.fetch_add(my_failed);
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  return WriteStats{failed.load(), 0};
}

std::vector<std::pair<std::string, std::string>> stage_files(const Payload& payload, const std::string& staging,
                                                            const std::string& watched) {
  std::vector<std::pair<std::string, std::string>> moves;
  // Deal the files in the clients' order, as the sockets shapes would send them.
  std::size_t most = 0;
  for (const auto& connections : payload.clients) {
    most = std::max(most, connections.size());
  }
  for (std::size_t k = 0; k < most; ++k) {
    for (const auto& connections : payload.clients) {
      if (k >= connections.size()) {
        continue;
      }
      const Connection& connection = connections[k];
      // git names a trace file after the last component of its SID.
      const std::string name = connection.sid.substr(connection.sid.rfind('/') + 1);
      std::ofstream out(staging + "/" + name, std::ios::binary);
      for (const std::string& line : connection.lines) {
        out << line;
      }
      if (!out) {
        throw std::runtime_error("cannot write " + staging + "/" + name);
      }
      moves.emplace_back(staging + "/" + name, watched + "/" + name);
    }
  }
  return moves;
}

WriteStats rename_all(const std::vector<std::pair<std::string, std::string>>& moves) {
  WriteStats stats;
  for (const auto& [from, to] : moves) {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      ++stats.failed_writes;
    }
  }
  return stats;
}

}  // namespace trace2d::bench
