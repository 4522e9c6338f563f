#include "tests/e2e/http_loopback.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <memory>

#include "daemon/source/asio.hpp"

namespace trace2d::test {

namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

int free_port() {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

std::string url_encode(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '_' || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string non_loopback_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    return {};
  }
  const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owned(list, &::freeifaddrs);
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_UP) == 0 ||
        (i->ifa_flags & IFF_LOOPBACK) != 0) {
      continue;
    }
    char text[INET_ADDRSTRLEN] = {};
    const auto* address = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (::inet_ntop(AF_INET, &address->sin_addr, text, sizeof text) != nullptr) {
      return text;
    }
  }
  return {};
}

HttpAnswer http_get(int port, const std::string& target, const std::string& accept) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code ec;
  stream.expires_after(std::chrono::seconds(5));
  stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)), ec);
  if (ec) {
    return {};
  }
  http::request<http::empty_body> request(http::verb::get, target, 11);
  request.set(http::field::host, "127.0.0.1");
  if (!accept.empty()) {
    request.set(http::field::accept, accept);
  }
  http::write(stream, request, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response, ec);
  if (ec) {
    return {};
  }
  return {static_cast<int>(response.result_int()), std::string(response[http::field::content_type]),
          response.body()};
}

namespace {

// One connection: read a request, answer 200, until the peer closes.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, std::shared_ptr<std::atomic<std::size_t>> requests)
      : m_stream(std::move(socket)), m_requests(std::move(requests)) {}

  void read_next() {
    m_request = {};
    http::async_read(m_stream, m_buffer, m_request, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec) {
        self->answer();
      }
    });
  }

 private:
  void answer() {
    m_response = {};
    m_response.version(m_request.version());
    m_response.result(http::status::ok);
    m_response.set(http::field::content_type, m_request[http::field::content_type]);
    m_response.keep_alive(m_request.keep_alive());
    m_response.prepare_payload();
    ++*m_requests;
    http::async_write(m_stream, m_response, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec && self->m_request.keep_alive()) {
        self->read_next();
      }
    });
  }

  beast::tcp_stream m_stream;
  beast::flat_buffer m_buffer;
  http::request<http::string_body> m_request;
  http::response<http::empty_body> m_response;
  std::shared_ptr<std::atomic<std::size_t>> m_requests;
};

}  // namespace

struct AcceptingHttpServer::Loop {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  std::shared_ptr<std::atomic<std::size_t>> requests;

  void accept_next() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        return;
      }
      std::make_shared<Connection>(std::move(socket), requests)->read_next();
      accept_next();
    });
  }
};

AcceptingHttpServer::AcceptingHttpServer()
    : m_loop(std::make_unique<Loop>()), m_requests(std::make_shared<std::atomic<std::size_t>>(0)) {
  m_loop->requests = m_requests;
  m_port = m_loop->acceptor.local_endpoint().port();
  m_loop->accept_next();
  m_thread = std::thread([loop = m_loop.get()] { loop->io.run(); });
}

AcceptingHttpServer::~AcceptingHttpServer() {
  m_loop->io.stop();
  m_thread.join();
}

}  // namespace trace2d::test
