#pragma once
// HTTP on loopback for the end-to-end tests: a GET (to scrape /metrics) and
// a server that accepts every request (a collector that keeps nothing), on
// Boost.Beast like the daemon's own HTTP.

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

namespace trace2d::test {

struct HttpAnswer {
  int status = 0;  // 0: nothing answered
  std::string content_type;
  std::string body;
};

// A loopback port nobody listens on now (for programs that take no port 0).
int free_port();

// Percent-encodes `text` for a URL's query string.
std::string url_encode(const std::string& text);

// The first IPv4 address of an interface that is up and not loopback, or
// "" when the host has none (for what must not be on loopback: a
// collector behind a proxy).
std::string non_loopback_address();

// A GET of http://127.0.0.1:<port><target>, with `accept` as Accept when set.
HttpAnswer http_get(int port, const std::string& target, const std::string& accept = "");

// Listens on 127.0.0.1 (a free port) and answers every request 200 with an
// empty body, which is also an empty ExportTraceServiceResponse in OTLP's
// protobuf encoding. Keeps connections alive; stops with the object.
class AcceptingHttpServer {
 public:
  AcceptingHttpServer();
  ~AcceptingHttpServer();
  AcceptingHttpServer(const AcceptingHttpServer&) = delete;
  AcceptingHttpServer& operator=(const AcceptingHttpServer&) = delete;

  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  // Requests answered so far.
  [[nodiscard]] std::size_t requests() const { return m_requests->load(); }

 private:
  struct Loop;
  std::unique_ptr<Loop> m_loop;
  std::shared_ptr<std::atomic<std::size_t>> m_requests;
  int m_port = 0;
  std::thread m_thread;
};

}  // namespace trace2d::test
