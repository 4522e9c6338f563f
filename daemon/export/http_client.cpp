#include "daemon/export/http_client.hpp"

#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>

namespace trace2d::exporter {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::optional<Endpoint> parse_endpoint(std::string_view url, std::string& error) {
  constexpr std::string_view k_http = "http://";
  if (url.substr(0, 8) == "https://") {
    error = "https endpoints are not supported yet: use http:// (a Collector on the host or behind a TLS proxy)";
    return std::nullopt;
  }
  if (url.substr(0, k_http.size()) != k_http) {
    error = "the endpoint must start with http://";
    return std::nullopt;
  }
  url.remove_prefix(k_http.size());
  const auto slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  Endpoint endpoint;
  endpoint.target = slash == std::string_view::npos ? std::string("/") : std::string(url.substr(slash));
  if (!authority.empty() && authority.front() == '[') {  // [::1]:4318
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      error = "unbalanced '[' in the endpoint's host";
      return std::nullopt;
    }
    endpoint.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() == ':') {
      endpoint.port = std::string(authority.substr(1));
    }
  } else {
    const auto colon = authority.rfind(':');
    endpoint.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      endpoint.port = std::string(authority.substr(colon + 1));
    }
  }
  if (endpoint.port.empty()) {
    endpoint.port = "80";
  }
  int port = 0;
  const auto [end, ec] = std::from_chars(endpoint.port.data(), endpoint.port.data() + endpoint.port.size(), port);
  if (endpoint.host.empty() || ec != std::errc() || end != endpoint.port.data() + endpoint.port.size() || port <= 0 ||
      port > 65535) {
    error = "the endpoint needs a host and a port from 1 to 65535";
    return std::nullopt;
  }
  return endpoint;
}

struct HttpClient::Connection {
  asio::io_context io;
  beast::tcp_stream stream{io};
  beast::flat_buffer buffer;
  bool connected = false;
};

HttpClient::HttpClient(Endpoint endpoint, std::chrono::milliseconds timeout)
    : m_endpoint(std::move(endpoint)), m_timeout(timeout), m_connection(std::make_unique<Connection>()) {}

HttpClient::~HttpClient() = default;

void HttpClient::abort() {
  m_aborted.store(true);
  std::lock_guard lock(m_fd_mutex);
  if (m_fd >= 0) {
    ::shutdown(m_fd, SHUT_RDWR);  // the blocked read or write returns at once
  }
}

void HttpClient::disconnect() {
  std::lock_guard lock(m_fd_mutex);
  m_fd = -1;
  beast::error_code ignored;
  m_connection->stream.socket().close(ignored);
  m_connection->connected = false;
  m_connection->buffer.clear();
}

HttpResponse HttpClient::post(const Headers& headers, std::string body) {
  if (m_aborted.load()) {
    throw TransportError("stopping");
  }
  Connection& c = *m_connection;
  beast::error_code ec;
  if (!c.connected) {
    asio::ip::tcp::resolver resolver(c.io);
    const auto addresses = resolver.resolve(m_endpoint.host, m_endpoint.port, ec);
    if (ec) {
      throw TransportError("cannot resolve " + m_endpoint.host + ": " + ec.message());
    }
    c.stream.expires_after(m_timeout);
    c.stream.connect(addresses, ec);
    if (ec) {
      throw TransportError("cannot connect to " + m_endpoint.host + ":" + m_endpoint.port + ": " + ec.message());
    }
    c.connected = true;
    std::lock_guard lock(m_fd_mutex);
    m_fd = c.stream.socket().native_handle();
  }
  http::request<http::string_body> request{http::verb::post, m_endpoint.target, 11};
  request.set(http::field::host, m_endpoint.host + ":" + m_endpoint.port);
  request.set(http::field::user_agent, "trace2d");
  for (const auto& [name, value] : headers) {
    request.set(name, value);
  }
  request.body() = std::move(body);
  request.prepare_payload();
  request.keep_alive(true);

  const auto fail = [&](const std::string& what) -> TransportError {
    disconnect();
    return TransportError(what + ": " + (m_aborted.load() ? std::string("stopping") : ec.message()));
  };
  c.stream.expires_after(m_timeout);
  http::write(c.stream, request, ec);
  if (ec) {
    throw fail("sending to " + m_endpoint.host + ":" + m_endpoint.port);
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(1024 * 1024);  // an answer is a status, not data
  http::read(c.stream, c.buffer, parser, ec);
  if (ec) {
    throw fail("reading the answer of " + m_endpoint.host + ":" + m_endpoint.port);
  }
  http::response<http::string_body> response = parser.release();
  HttpResponse out;
  out.status = static_cast<int>(response.result_int());
  out.content_type = std::string(response[http::field::content_type]);
  const auto header = response[http::field::retry_after];
  const std::string_view retry_after(header.data(), header.size());
  int seconds = 0;
  if (const auto [end, parse_ec] = std::from_chars(retry_after.data(), retry_after.data() + retry_after.size(), seconds);
      !retry_after.empty() && parse_ec == std::errc() && end == retry_after.data() + retry_after.size() && seconds >= 0) {
    out.retry_after = std::chrono::seconds(std::min(seconds, 3600));
  }
  out.body = std::move(response.body());
  if (!response.keep_alive()) {
    disconnect();
  }
  return out;
}

}  // namespace trace2d::exporter
