#pragma once
// The `/metrics` endpoint: a small HTTP/1.1 server (Boost.Beast) on the
// daemon's io_context. Any local user can connect, so it holds little and
// nothing for long: connections are bounded (when full, the oldest one
// still waiting for a request, else the reply that has moved no byte the
// longest, makes room for a new one, so neither silent holders nor clients
// that ask and never read keep a scraper out), a request is headers only and
// bounded in bytes, every read and every write has a deadline (a reply that
// stalls is abandoned), and a scrape renders from counters and a copy of the
// histograms, never from the database, so the io thread is never held.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/metrics/exposition.hpp"
#include "daemon/source/asio.hpp"

namespace trace2d::metrics {

// "127.0.0.1:9464", "[::1]:9464", "localhost:9464", or a port alone
// ("9464"), which means loopback: the figures name the commands users run,
// so exposing them beyond the host is a choice to write out. IP literals
// only (no resolver on the io thread); the problem in `error`.
[[nodiscard]] std::optional<asio::ip::tcp::endpoint> parse_listen_address(std::string_view text,
                                                                           std::string& error);

class MetricsServer {
 public:
  struct Limits {
    std::size_t max_connections = 16;
    std::size_t max_request_bytes = 8192;  // the request line and headers
    std::chrono::milliseconds timeout{10000};  // per request read, per whole reply
    // A reply that moves no byte this long is abandoned: its client does
    // not read (a loopback scraper reads as fast as it is written).
    std::chrono::milliseconds write_stall{2000};
    // When every slot is taken and none waits for a request, a reply
    // stalled this long (or running this long times ten) gives its slot to
    // a new connection.
    std::chrono::milliseconds evict_stalled{100};
  };
  using Render = std::function<std::string(Format)>;

  // Binds and listens; throws std::system_error naming the address.
  MetricsServer(asio::io_context& io, const asio::ip::tcp::endpoint& at, Render render, Limits limits);
  MetricsServer(asio::io_context& io, const asio::ip::tcp::endpoint& at, Render render)
      : MetricsServer(io, at, std::move(render), Limits{}) {}
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  [[nodiscard]] asio::ip::tcp::endpoint local_endpoint() const { return m_endpoint; }
  void start();
  // Stops accepting and closes every connection, so that io.run() can
  // return. Safe from any thread.
  void stop();

  struct State;

 private:
  std::shared_ptr<State> m_state;
  asio::ip::tcp::endpoint m_endpoint;
};

}  // namespace trace2d::metrics
