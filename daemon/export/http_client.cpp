#include "daemon/export/http_client.hpp"

#include <openssl/ssl.h>
#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <charconv>

#include "daemon/export/host_lookup.hpp"

namespace trace2d::exporter {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;

namespace {

// "host:port", an IPv6 address in brackets, as Host and request targets need it.
std::string authority_of(const Endpoint& endpoint) {
  const bool v6 = endpoint.host.find(':') != std::string::npos;
  return (v6 ? "[" + endpoint.host + "]" : endpoint.host) + ":" + endpoint.port;
}

// One asynchronous operation's outcome, set by its handler.
struct Completion {
  beast::error_code ec;
  bool done = false;
  auto handler() {
    return [this](const beast::error_code& result, std::size_t = 0) {
      ec = result;
      done = true;
    };
  }
};

}  // namespace

std::optional<Endpoint> parse_endpoint(std::string_view url, std::string& error, std::string_view default_port) {
  Endpoint endpoint;
  if (url.substr(0, 8) == "https://") {
    endpoint.tls = true;
    url.remove_prefix(8);
  } else if (url.substr(0, 7) == "http://") {
    url.remove_prefix(7);
  } else {
    error = "the endpoint must start with http:// or https://";
    return std::nullopt;
  }
  const auto slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
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
    endpoint.port = !default_port.empty() ? std::string(default_port) : endpoint.tls ? "443" : "80";
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
  ssl::context tls{ssl::context::tls_client};
  beast::tcp_stream plain{io};
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> secure;  // https: one per connection
  beast::flat_buffer buffer;
  bool connected = false;

  beast::tcp_stream& tcp() { return secure ? beast::get_lowest_layer(*secure) : plain; }
};

HttpClient::HttpClient(Endpoint endpoint, std::chrono::milliseconds timeout, const TlsFiles& tls,
                       std::optional<Proxy> proxy)
    : m_endpoint(std::move(endpoint)),
      m_proxy(std::move(proxy)),
      m_timeout(timeout),
      m_connection(std::make_unique<Connection>()) {
  if (!m_endpoint.tls) {
    return;
  }
  ssl::context& context = m_connection->tls;
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                      ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  context.set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  if (tls.ca_file.empty()) {
    context.set_default_verify_paths(ec);
  } else {
    context.load_verify_file(tls.ca_file, ec);
  }
  if (ec) {
    throw std::invalid_argument("TLS: cannot load the trusted CAs" +
                                (tls.ca_file.empty() ? std::string() : " from '" + tls.ca_file + "'") + ": " +
                                ec.message());
  }
  if (!tls.client_cert.empty()) {
    context.use_certificate_chain_file(tls.client_cert, ec);
    if (!ec) {
      context.use_private_key_file(tls.client_key.empty() ? tls.client_cert : tls.client_key, ssl::context::pem, ec);
    }
    if (ec) {
      throw std::invalid_argument("TLS: cannot load the client certificate '" + tls.client_cert + "': " +
                                  ec.message());
    }
  }
}

HttpClient::~HttpClient() = default;

void HttpClient::abort() {
  m_aborted.store(true);
  m_connection->io.stop();  // a connect in progress returns at once (thread-safe)
  std::lock_guard lock(m_fd_mutex);
  if (m_fd >= 0) {
    ::shutdown(m_fd, SHUT_RDWR);  // the blocked read or write returns at once
  }
}

void HttpClient::disconnect() {
  std::lock_guard lock(m_fd_mutex);
  m_fd = -1;
  beast::error_code ignored;
  m_connection->tcp().socket().close(ignored);
  m_connection->secure.reset();
  m_connection->connected = false;
  m_connection->buffer.clear();
}

bool HttpClient::complete(const bool& done) {
  Connection& c = *m_connection;
  c.io.restart();
  while (!done && !m_aborted.load() && c.io.run_one() > 0) {
  }
  if (done) {
    return true;
  }
  disconnect();  // ends the operation; its handler runs before `done` goes
  c.io.restart();
  c.io.run();
  return false;
}

void HttpClient::connect() {
  Connection& c = *m_connection;
  beast::error_code ec;
  // Through a proxy, the connection is to the proxy; the collector's name
  // is the proxy's to resolve.
  const std::string& host = m_proxy ? m_proxy->host : m_endpoint.host;
  const std::string& port = m_proxy ? m_proxy->port : m_endpoint.port;
  const std::string via = m_proxy ? " (the proxy, from the environment)" : "";
  std::vector<asio::ip::tcp::endpoint> addresses;
  try {
    addresses = look_up(host, port, m_timeout, m_aborted);
  } catch (const TransportError& e) {
    throw TransportError("cannot resolve " + host + via + ": " + e.what());
  }
  if (m_endpoint.tls) {
    c.secure = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(c.io, c.tls);
  }
  // Asynchronous, on this thread: its deadline holds (Beast times only
  // asynchronous operations out), and abort() ends it at once, where a
  // blocking connect() to an address that never answers held stop() for
  // the whole timeout.
  c.tcp().expires_after(m_timeout);
  bool done = false;
  c.tcp().async_connect(addresses, [&](const beast::error_code& result, const asio::ip::tcp::endpoint&) {
    ec = result;
    done = true;
  });
  if (!complete(done)) {
    throw TransportError("cannot connect to " + host + ":" + port + via + ": stopping");
  }
  if (ec) {
    disconnect();
    throw TransportError("cannot connect to " + host + ":" + port + via + ": " + ec.message());
  }
  {
    std::lock_guard lock(m_fd_mutex);
    m_fd = c.tcp().socket().native_handle();
  }
  if (m_proxy && c.secure) {
    open_tunnel();
  }
  if (c.secure) {
    // SNI, and the certificate must name the host.
    // SSL_set_tlsext_host_name(), without its macro's C cast.
    if (SSL_ctrl(c.secure->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 static_cast<void*>(m_endpoint.host.data())) != 1) {
      disconnect();
      throw TransportError("TLS: cannot set the server name " + m_endpoint.host);
    }
    c.secure->set_verify_callback(ssl::host_name_verification(m_endpoint.host));
    c.tcp().expires_after(m_timeout);
    Completion handshake;
    c.secure->async_handshake(ssl::stream_base::client, handshake.handler());
    if (!complete(handshake.done) || handshake.ec) {
      const std::string why = m_aborted.load() ? std::string("stopping") : handshake.ec.message();
      disconnect();
      throw TransportError("TLS handshake with " + m_endpoint.host + ":" + m_endpoint.port + " failed: " + why);
    }
  }
  c.connected = true;
}

void HttpClient::open_tunnel() {
  Connection& c = *m_connection;
  const std::string authority = authority_of(m_endpoint);
  http::request<http::empty_body> request{http::verb::connect, authority, 11};
  request.set(http::field::host, authority);
  request.set(http::field::user_agent, "trace2d");
  if (!m_proxy->authorization.empty()) {
    request.set(http::field::proxy_authorization, m_proxy->authorization);
  }
  c.tcp().expires_after(m_timeout);
  Completion written;
  http::async_write(c.tcp(), request, written.handler());
  beast::error_code ec = complete(written.done) ? written.ec : asio::error::operation_aborted;
  // A 2xx answer to CONNECT has no body: the tunnel starts right after its
  // headers, so the parser must not wait for one.
  http::response_parser<http::empty_body> parser;
  parser.skip(true);
  if (!ec) {
    Completion read;
    http::async_read(c.tcp(), c.buffer, parser, read.handler());
    ec = complete(read.done) ? read.ec : asio::error::operation_aborted;
  }
  if (ec) {
    const std::string why = m_aborted.load() ? std::string("stopping") : ec.message();
    disconnect();
    throw TransportError("proxy " + m_proxy->address() + ": no tunnel to " + authority + ": " + why);
  }
  const int status = static_cast<int>(parser.get().result_int());
  if (status < 200 || status > 299) {
    disconnect();
    throw TransportError("proxy " + m_proxy->address() + " refused the tunnel to " + authority + ": HTTP " +
                         std::to_string(status) +
                         (status == 407 ? " (proxy authentication: user:password@ in HTTPS_PROXY)" : ""));
  }
  c.buffer.clear();  // nothing of the collector's can have come before the handshake
}

bool HttpClient::closed_while_idle() {
  // Asked before writing, not learned by a failed request: one written to
  // a connection the collector had closed fails, and might have been
  // taken. A TLS connection's close_notify is bytes: unasked, too.
  char byte = 0;
  const ssize_t n = ::recv(m_connection->tcp().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

HttpResponse HttpClient::post(const Headers& headers, std::string& body) {
  if (m_aborted.load()) {
    throw TransportError("stopping");
  }
  Connection& c = *m_connection;
  if (c.connected && closed_while_idle()) {
    disconnect();
  }
  if (!c.connected) {
    connect();
  }
  // A plain request through a proxy names the collector in full (the
  // absolute form); a tunnel carries it as to the collector itself.
  const bool absolute = m_proxy && !m_endpoint.tls;
  const std::string target =
      absolute ? "http://" + authority_of(m_endpoint) + m_endpoint.target : m_endpoint.target;
  http::request<http::string_body> request{http::verb::post, target, 11};
  request.set(http::field::host, authority_of(m_endpoint));
  request.set(http::field::user_agent, "trace2d");
  if (absolute && !m_proxy->authorization.empty()) {
    request.set(http::field::proxy_authorization, m_proxy->authorization);
  }
  for (const auto& [name, value] : headers) {
    request.set(name, value);
  }
  request.body() = std::move(body);
  request.prepare_payload();
  request.keep_alive(true);

  beast::error_code ec;
  const auto fail = [&](const std::string& what) -> TransportError {
    disconnect();
    return TransportError(what + ": " + (m_aborted.load() ? std::string("stopping") : ec.message()));
  };
  http::response_parser<http::string_body> parser;
  parser.body_limit(1024 * 1024);  // an answer is a status, not data
  // One deadline for the request, written and answered: asynchronous
  // operations, as connect()'s, since Beast times out no blocking one (a
  // collector that took the connection and never answered held the
  // exporter for good).
  c.tcp().expires_after(m_timeout);
  Completion written;
  if (c.secure) {
    http::async_write(*c.secure, request, written.handler());
  } else {
    http::async_write(c.plain, request, written.handler());
  }
  ec = complete(written.done) ? written.ec : asio::error::operation_aborted;
  body = std::move(request.body());
  if (ec) {
    throw fail("sending to " + m_endpoint.host + ":" + m_endpoint.port);
  }
  Completion read;
  if (c.secure) {
    http::async_read(*c.secure, c.buffer, parser, read.handler());
  } else {
    http::async_read(c.plain, c.buffer, parser, read.handler());
  }
  ec = complete(read.done) ? read.ec : asio::error::operation_aborted;
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
