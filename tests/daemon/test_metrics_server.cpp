// The /metrics server against plain sockets: answers, refusals, and the
// bounds that keep any local user from holding it.

#include "daemon/metrics/metrics_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace trace2d::metrics {
namespace {

using asio::ip::tcp;

class MetricsServerTest : public ::testing::Test {
 protected:
  void start(MetricsServer::Limits limits) {
    std::string error;
    m_server = std::make_unique<MetricsServer>(
        m_io, *parse_listen_address("0", error),
        [this](Format format) {
          ++m_renders;
          if (m_big_replies) {
            return std::string(4 << 20, 'x');  // more than any socket buffers
          }
          return format == Format::openmetrics ? std::string("t 1\n# EOF\n") : std::string("t 1\n");
        },
        limits);
    m_server->start();
    m_thread = std::thread([this] { m_io.run(); });
  }
  void TearDown() override {
    if (m_server) {
      m_server->stop();
    }
    if (m_thread.joinable()) {
      m_thread.join();  // returns only if stop() closed everything
    }
  }

  tcp::socket connect() {
    tcp::socket socket(m_client_io);
    socket.connect(m_server->local_endpoint());
    return socket;
  }
  // Sends `request`, reads until the server closes (or `until` is seen).
  std::string exchange(tcp::socket& socket, const std::string& request, const std::string& until = "") {
    asio::write(socket, asio::buffer(request));
    std::string answer;
    std::array<char, 4096> buffer{};
    boost::system::error_code ec;
    while (until.empty() || answer.find(until) == std::string::npos) {
      const std::size_t n = socket.read_some(asio::buffer(buffer), ec);
      if (ec) {
        break;
      }
      answer.append(buffer.data(), n);
    }
    return answer;
  }
  bool closed_by_server(tcp::socket& socket) {
    std::array<char, 16> buffer{};
    boost::system::error_code ec;
    socket.read_some(asio::buffer(buffer), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

  asio::io_context m_io;
  asio::io_context m_client_io;
  std::unique_ptr<MetricsServer> m_server;
  std::thread m_thread;
  // Connects with a small receive buffer, asks for /metrics and leaves the
  // reply unread.
  tcp::socket ask_and_never_read() {
    tcp::socket socket(m_client_io);
    socket.open(tcp::v4());
    socket.set_option(asio::socket_base::receive_buffer_size(4096));
    socket.connect(m_server->local_endpoint());
    asio::write(socket, asio::buffer(std::string("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")));
    return socket;
  }

  std::atomic<int> m_renders{0};
  bool m_big_replies = false;
};

TEST_F(MetricsServerTest, ServesTheFormatTheClientAsksFor) {
  start({});
  tcp::socket socket = connect();
  const std::string text = exchange(socket, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "t 1\n");
  EXPECT_NE(text.find("HTTP/1.1 200 OK"), std::string::npos) << text;
  EXPECT_NE(text.find("text/plain; version=0.0.4"), std::string::npos) << text;
  // The same connection, kept alive, asked for OpenMetrics.
  const std::string open = exchange(
      socket, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text;version=1.0.0\r\n\r\n",
      "# EOF\n");
  EXPECT_NE(open.find("application/openmetrics-text; version=1.0.0"), std::string::npos) << open;
  EXPECT_EQ(m_renders.load(), 2);
}

TEST_F(MetricsServerTest, OtherPathsAndMethodsAreRefused) {
  start({});
  tcp::socket a = connect();
  EXPECT_NE(exchange(a, "GET / HTTP/1.0\r\n\r\n").find("404 Not Found"), std::string::npos);
  tcp::socket b = connect();
  EXPECT_NE(exchange(b, "DELETE /metrics HTTP/1.0\r\n\r\n").find("405 Method Not Allowed"), std::string::npos);
  tcp::socket head = connect();  // HEAD: the length of what GET would send, no body
  const std::string headers = exchange(head, "HEAD /metrics HTTP/1.0\r\n\r\n");
  EXPECT_NE(headers.find("200 OK"), std::string::npos) << headers;
  EXPECT_NE(headers.find("Content-Length: 4\r\n"), std::string::npos) << headers;
  EXPECT_TRUE(headers.ends_with("\r\n\r\n")) << headers;
  EXPECT_EQ(m_renders.exchange(0), 1);
  tcp::socket c = connect();  // a body is refused: requests are headers only
  EXPECT_EQ(exchange(c, "POST /metrics HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello").find("200"), std::string::npos);
  EXPECT_EQ(m_renders.load(), 0);
}

TEST_F(MetricsServerTest, OversizedRequestsAreDropped) {
  MetricsServer::Limits limits;
  limits.max_request_bytes = 1024;
  start(limits);
  tcp::socket socket = connect();
  const std::string answer =
      exchange(socket, "GET /metrics HTTP/1.1\r\nX-Pad: " + std::string(4096, 'a') + "\r\n\r\n");
  EXPECT_EQ(answer.find("200"), std::string::npos) << answer;
  EXPECT_EQ(m_renders.load(), 0);
}

TEST_F(MetricsServerTest, IdleConnectionsTimeOutAndConnectionsAreBounded) {
  MetricsServer::Limits limits;
  limits.max_connections = 2;
  limits.timeout = std::chrono::milliseconds(300);
  start(limits);
  tcp::socket first = connect();
  tcp::socket second = connect();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // both accepted
  const auto before = std::chrono::steady_clock::now();
  EXPECT_TRUE(closed_by_server(first));  // silent: closed at its deadline
  EXPECT_GE(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(200));
  EXPECT_TRUE(closed_by_server(second));
  tcp::socket third = connect();
  EXPECT_NE(exchange(third, "GET /metrics HTTP/1.0\r\n\r\n").find("200 OK"), std::string::npos);
}

// Whoever fills every slot with silent connections loses the oldest of them
// to each new connection: a scraper still gets its answer at once.
TEST_F(MetricsServerTest, SilentConnectionsMakeRoomForAScraper) {
  MetricsServer::Limits limits;
  limits.max_connections = 3;
  start(limits);  // the default deadline, 10 s: nobody times out here
  std::vector<tcp::socket> silent;
  for (int i = 0; i < 3; ++i) {
    silent.push_back(connect());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // all accepted
  const auto before = std::chrono::steady_clock::now();
  tcp::socket scraper = connect();
  EXPECT_NE(exchange(scraper, "GET /metrics HTTP/1.0\r\n\r\n").find("200 OK"), std::string::npos);
  EXPECT_TRUE(closed_by_server(silent[0]));  // the oldest made room
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2));
  // Many more silent ones: the bound holds, each new one evicting the oldest.
  for (int i = 0; i < 20; ++i) {
    silent.push_back(connect());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  int open = 0;
  for (std::size_t i = 1; i < silent.size(); ++i) {
    silent[i].non_blocking(true);
    std::array<char, 1> byte{};
    boost::system::error_code ec;
    silent[i].read_some(asio::buffer(byte), ec);
    open += ec == asio::error::would_block ? 1 : 0;
  }
  EXPECT_LE(open, 3);
  EXPECT_GE(open, 1);
}

// Issue 24, finding 9: clients that ask and never read held every slot for
// the whole write deadline, and a scraper was refused meanwhile. A reply
// that moves nothing now yields its slot to a new connection.
TEST_F(MetricsServerTest, RepliesNobodyReadsMakeRoomForAScraper) {
  m_big_replies = true;
  MetricsServer::Limits limits;
  limits.max_connections = 4;
  start(limits);  // the default deadlines: 10 s per reply, 2 s without progress
  std::vector<tcp::socket> non_readers;
  for (int i = 0; i < 4; ++i) {
    non_readers.push_back(ask_and_never_read());
  }
  ASSERT_TRUE([&] {
    for (int i = 0; i < 100 && m_renders.load() < 4; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return m_renders.load() == 4;
  }());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // every reply stalled
  for (int i = 0; i < 3; ++i) {
    const auto before = std::chrono::steady_clock::now();
    tcp::socket scraper = connect();
    const std::string answer = exchange(scraper, "GET /metrics HTTP/1.0\r\n\r\n");
    EXPECT_NE(answer.find("200 OK"), std::string::npos) << "scrape " << i;
    EXPECT_GT(answer.size(), std::size_t{4 << 20}) << "the whole reply, scrape " << i;
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2)) << "scrape " << i;
  }
}

// Without eviction, the write deadline alone frees the slots: a reply that
// moves nothing for `write_stall` is abandoned, not held for `timeout`.
TEST_F(MetricsServerTest, AReplyThatMovesNothingIsAbandonedAtItsWriteDeadline) {
  m_big_replies = true;
  MetricsServer::Limits limits;
  limits.max_connections = 2;
  limits.write_stall = std::chrono::milliseconds(300);
  limits.evict_stalled = std::chrono::hours(1);  // never: the deadline alone
  start(limits);
  std::vector<tcp::socket> non_readers;
  for (int i = 0; i < 2; ++i) {
    non_readers.push_back(ask_and_never_read());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  tcp::socket refused = connect();
  EXPECT_TRUE(closed_by_server(refused)) << "full, and nothing stalled long enough to evict";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // past the 300 ms write deadline
  tcp::socket scraper = connect();
  const std::string answer = exchange(scraper, "GET /metrics HTTP/1.0\r\n\r\n");
  EXPECT_NE(answer.find("200 OK"), std::string::npos);
  EXPECT_GT(answer.size(), std::size_t{4 << 20});
}

TEST_F(MetricsServerTest, StopClosesOpenConnectionsSoTheLoopEnds) {
  start({});
  tcp::socket idle = connect();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto before = std::chrono::steady_clock::now();
  m_server->stop();
  m_thread.join();  // the default 10 s deadline would make this slow
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2));
  EXPECT_TRUE(closed_by_server(idle));
}

TEST(ListenAddress, APortAloneMeansLoopback) {
  std::string error;
  const auto port_only = parse_listen_address("9464", error);
  ASSERT_TRUE(port_only) << error;
  EXPECT_EQ(port_only->address().to_string(), "127.0.0.1");
  EXPECT_EQ(port_only->port(), 9464);
  EXPECT_EQ(parse_listen_address("0.0.0.0:80", error)->address().to_string(), "0.0.0.0");
  EXPECT_EQ(parse_listen_address("[::1]:9464", error)->address().to_string(), "::1");
  EXPECT_EQ(parse_listen_address("localhost:9", error)->address().to_string(), "127.0.0.1");
  EXPECT_FALSE(parse_listen_address("", error));
  EXPECT_FALSE(parse_listen_address("::1:9464", error));
  EXPECT_NE(error.find("brackets"), std::string::npos);
  EXPECT_FALSE(parse_listen_address("example.com:9464", error));
  EXPECT_NE(error.find("not an IP address"), std::string::npos);
  EXPECT_FALSE(parse_listen_address("127.0.0.1:65536", error));
  EXPECT_FALSE(parse_listen_address("127.0.0.1:", error));
}

TEST(ListenAddress, ABusyPortIsAnErrorThatNamesIt) {
  asio::io_context io;
  std::string error;
  MetricsServer first(io, *parse_listen_address("0", error), [](Format) { return std::string(); });
  try {
    MetricsServer second(io, first.local_endpoint(), [](Format) { return std::string(); });
    FAIL() << "bound twice";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot bind 127.0.0.1:" + std::to_string(first.local_endpoint().port())),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace trace2d::metrics
