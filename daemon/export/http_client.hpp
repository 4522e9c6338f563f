#pragma once
// A small blocking HTTP/1.1 client for the exporter's thread (Boost.Beast,
// OpenSSL for https): POSTs to one endpoint over a kept-alive connection,
// with a deadline on every request. abort() from another thread ends a
// request in progress (shutdown), so a collector that stops answering never
// holds trace2d.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/export/transport.hpp"

namespace trace2d::exporter {

struct Endpoint {
  bool tls = false;  // https://
  std::string host;
  std::string port;
  std::string target;  // the path, "/v1/traces"
};

// "http[s]://host[:port][/path]"; nullopt with `error` set otherwise. The
// port, when the URL has none: `default_port`, else 443 for https and 80
// for http.
[[nodiscard]] std::optional<Endpoint> parse_endpoint(std::string_view url, std::string& error,
                                                     std::string_view default_port = {});

// For https (and gRPC over TLS): whom to trust (the system's CAs unless a file is named) and
// the client's own certificate, when the collector asks for one.
struct TlsFiles {
  std::string ca_file;      // PEM; "": the system's trusted CAs
  std::string client_cert;  // PEM; "": none
  std::string client_key;   // PEM; "": none
};

// An HTTP proxy between trace2d and the collector (proxy.hpp chooses it):
// a plain request goes to it with the collector's absolute URL; an https
// one through a CONNECT tunnel, TLS end to end with the collector.
struct Proxy {
  std::string host;
  std::string port;
  std::string authorization;  // the Proxy-Authorization value ("Basic ..."), or ""
  [[nodiscard]] std::string address() const { return host + ":" + port; }
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::optional<std::chrono::seconds> retry_after;
};

class HttpClient {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // Throws std::invalid_argument when a TLS file cannot be loaded.
  HttpClient(Endpoint endpoint, std::chrono::milliseconds timeout, const TlsFiles& tls = {},
             std::optional<Proxy> proxy = std::nullopt);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Throws TransportError when no answer came. `body` is sent as it is,
  // and moved back into `body` once written, so that its memory serves
  // the caller's next request. A kept-alive connection the collector
  // closed while idle (as servers and load balancers do) is opened again
  // before the request, not found dead by it.
  HttpResponse post(const Headers& headers, std::string& body);
  // Unblocks a post() in progress on another thread; later posts fail at once.
  void abort();

 private:
  struct Connection;
  // Runs the connection's io_context on this thread until the operation
  // started last sets `done` (its handler ran: completed, failed, or timed
  // out by the stream's deadline) or abort() is called; then false, the
  // operation cancelled and the connection closed.
  bool complete(const bool& done);
  void connect();
  void disconnect();
  // The kept-alive connection ended, or sent something unasked, since the
  // last answer: it cannot carry a request.
  [[nodiscard]] bool closed_while_idle();
  // Asks the proxy for a tunnel to the endpoint (CONNECT), on the
  // connection just opened to it.
  void open_tunnel();

  Endpoint m_endpoint;
  std::optional<Proxy> m_proxy;
  std::chrono::milliseconds m_timeout;
  std::unique_ptr<Connection> m_connection;
  std::atomic<bool> m_aborted{false};
  // The connection's descriptor for abort(), under m_fd_mutex: it must never
  // shut down a descriptor that was closed and reused for something else.
  std::mutex m_fd_mutex;
  int m_fd = -1;
};

}  // namespace trace2d::exporter
