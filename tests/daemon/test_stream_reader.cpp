// The stream reader on real socket pairs: every line arrives whole and in
// order, a connection that trickles is read in a few large reads rather
// than one per write, and closing drains what the sockets still hold.

#include "daemon/source/stream_reader.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <string>
#include <thread>

namespace trace2d::source {
namespace {

using std::chrono::milliseconds;

struct Harness {
  ingest::WorkQueue<ingest::IngestChunk> queue;
  ingest::MemoryBudget budget{64 * 1024 * 1024};
  std::atomic<std::uint64_t> channel_ids{0};
  ingest::IngestSink sink{queue, budget, channel_ids};
  std::atomic<int> emptied{0};
  StreamReader reader{sink, {}, [this](bool handed_over) { emptied += handed_over ? 0 : 1; }};

  // The client's end of a new connection.
  int connect(std::uint64_t channel) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    ingest::Origin origin;
    origin.channel = channel;
    reader.add(UniqueFd(fds[0]), origin);
    return fds[1];
  }

  // Chunks handed over until one ends the channel (or 10 s pass).
  std::vector<ingest::IngestChunk> until_end() {
    std::vector<ingest::IngestChunk> all;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      std::vector<ingest::IngestChunk> some;
      queue.pop_all(some, milliseconds(50));
      for (auto& chunk : some) {
        all.push_back(std::move(chunk));
      }
      if (!all.empty() && all.back().end_of_channel) {
        break;
      }
    }
    return all;
  }
};

std::vector<std::string> lines_of(const std::vector<ingest::IngestChunk>& chunks) {
  std::vector<std::string> out;
  for (const auto& chunk : chunks) {
    for (const auto& line : chunk.lines) {
      out.emplace_back(chunk.bytes.substr(line.offset, line.size));
    }
  }
  return out;
}

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    // No SIGPIPE: a reader told to close may have closed its end already.
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EPIPE) {
      return;
    } else {
      std::this_thread::sleep_for(milliseconds(1));
    }
  }
}

TEST(StreamReader, ATrickleIsReadInFewReadsAndArrivesWholeAndInOrder) {
  Harness h;
  const int client = h.connect(1);
  constexpr int k_lines = 60;
  for (int i = 0; i < k_lines; ++i) {
    write_all(client, "{\"n\":" + std::to_string(i) + "}\n");
    std::this_thread::sleep_for(milliseconds(1));
  }
  write_all(client, "{\"last\":\"no newline\"}");
  ::close(client);
  const auto chunks = h.until_end();
  ASSERT_FALSE(chunks.empty());
  EXPECT_TRUE(chunks.back().end_of_channel);
  const auto lines = lines_of(chunks);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(k_lines + 1));
  for (int i = 0; i < k_lines; ++i) {
    EXPECT_EQ(lines[static_cast<std::size_t>(i)], "{\"n\":" + std::to_string(i) + "}");
  }
  EXPECT_EQ(lines.back(), "{\"last\":\"no newline\"}");
  // One write per millisecond for 60+ ms, read every 5 ms at most: about a
  // dozen reads (generous bound for a loaded machine), not sixty.
  EXPECT_LT(chunks.size(), 30u);
  EXPECT_EQ(chunks.front().origins.at(0).channel, 1u);
  for (int i = 0; i < 100 && h.emptied.load() == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(h.emptied.load(), 1);
  EXPECT_EQ(h.reader.open_connections(), 0u);
}

TEST(StreamReader, ABurstIsReadAtOnceAndEveryByteArrives) {
  Harness h;
  const int client = h.connect(2);
  std::string burst;
  for (int i = 0; i < 40000; ++i) {
    burst += "{\"event\":\"region_enter\",\"i\":" + std::to_string(i) + "}\n";
  }
  std::thread writer([&] {
    write_all(client, burst);
    ::close(client);
  });
  const auto chunks = h.until_end();
  writer.join();
  const auto lines = lines_of(chunks);
  ASSERT_EQ(lines.size(), 40000u);
  EXPECT_EQ(lines.back(), "{\"event\":\"region_enter\",\"i\":39999}");
}

TEST(StreamReader, CloseAllDrainsWhatSocketsHoldAndEndsEveryChannel) {
  Harness h;
  const int a = h.connect(10);
  const int b = h.connect(11);
  write_all(a, "{\"a\":1}\n{\"a\":2}\n");
  write_all(b, "{\"b\":1}\n{\"b\":2, partial");
  h.reader.close_all();
  std::vector<ingest::IngestChunk> all;
  int ended = 0;
  for (int i = 0; i < 200 && ended < 2; ++i) {
    std::vector<ingest::IngestChunk> some;
    h.queue.pop_all(some, milliseconds(50));
    for (auto& chunk : some) {
      ended += chunk.end_of_channel ? 1 : 0;
      all.push_back(std::move(chunk));
    }
  }
  EXPECT_EQ(ended, 2);
  const auto lines = lines_of(all);
  EXPECT_EQ(lines.size(), 4u) << "the partial last line counts as a line";
  EXPECT_EQ(h.reader.open_connections(), 0u);
  // Added after close_all: closed as well (and what it held by then read).
  const int c = h.connect(12);
  std::vector<ingest::IngestChunk> late = h.until_end();
  ASSERT_FALSE(late.empty());
  EXPECT_TRUE(late.back().end_of_channel);
  EXPECT_EQ(late.back().origins.at(0).channel, 12u);
  ::close(a);
  ::close(b);
  ::close(c);
}

// A listening socket of its own, for the accepting reader.
struct Listener {
  explicit Listener(const std::string& path) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof address.sun_path - 1);
    EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(fd, 128), 0);
  }
  ~Listener() { ::close(fd); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  int connect() const {
    const int client = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_EQ(::connect(client, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
    return client;
  }

  int fd = -1;
  sockaddr_un address{};
};

TEST(StreamReader, AcceptsEveryClientReadsEachWholeAndStopsAcceptingWhenTold) {
  char dir[] = "/tmp/t2d-reader-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/s.sock";
  Harness h;
  {
    Listener listener(path);
    h.reader.accept_from(listener.fd);
    constexpr int k_clients = 20;
    for (int i = 0; i < k_clients; ++i) {
      const int client = listener.connect();
      write_all(client, "{\"client\":" + std::to_string(i) + ",\"n\":1}\n{\"client\":" + std::to_string(i) +
                            ",\"n\":2}\n");
      ::close(client);
    }
    std::map<std::uint64_t, std::vector<std::string>> by_channel;
    int ended = 0;
    for (int i = 0; i < 200 && ended < k_clients; ++i) {
      std::vector<ingest::IngestChunk> some;
      h.queue.pop_all(some, milliseconds(50));
      for (const auto& chunk : some) {
        EXPECT_EQ(chunk.origins.at(0).peer_pid, ::getpid()) << "from SO_PEERCRED";
        for (const auto& line : chunk.lines) {
          by_channel[chunk.origins.at(0).channel].emplace_back(chunk.bytes.substr(line.offset, line.size));
        }
        ended += chunk.end_of_channel ? 1 : 0;
      }
    }
    EXPECT_EQ(ended, k_clients);
    ASSERT_EQ(by_channel.size(), static_cast<std::size_t>(k_clients));
    for (const auto& [channel, lines] : by_channel) {
      ASSERT_EQ(lines.size(), 2u);
      EXPECT_EQ(lines[0].substr(0, 10), lines[1].substr(0, 10)) << "one client per channel";
    }
    EXPECT_EQ(h.sink.counters().channels_opened.load(), static_cast<std::uint64_t>(k_clients));
    EXPECT_EQ(h.sink.counters().channels_open.load(), 0u);
    h.reader.stop_accepting();
    const int late = listener.connect();  // completes in the backlog, unread
    write_all(late, "{\"late\":1}\n");
    std::vector<ingest::IngestChunk> some;
    h.queue.pop_all(some, milliseconds(100));
    EXPECT_TRUE(some.empty()) << "accepted after stop_accepting()";
    ::close(late);
  }
  ::unlink(path.c_str());
  ::rmdir(dir);
}

// At its bound of connections a uid's hung-up connections are read to free
// their places; at the memory bound too, what they hold is dropped and
// counted, never held beyond the bound (a burst of thousands of short
// processes took the queue to 15 times its bound).
TEST(StreamReader, ReapingAtTheConnectionBoundDropsAtFourTimesTheMemoryBound) {
  char dir[] = "/tmp/t2d-reader-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/s.sock";
  constexpr std::size_t k_limit = 1024;
  ingest::WorkQueue<ingest::IngestChunk> queue;
  ingest::MemoryBudget budget{k_limit};  // nothing releases it: no pipeline behind
  std::atomic<std::uint64_t> channel_ids{0};
  ingest::IngestSink sink{queue, budget, channel_ids};
  StreamReader::Options options;
  options.max_connections_per_uid = 2;
  options.overflow_wait = milliseconds(100);
  StreamReader reader{sink, options, [](bool) {}};
  constexpr int k_clients = 40;
  const std::string line(200, 'x');
  std::size_t line_bytes = 0;  // of the lines read into chunks
  int ended = 0;
  std::size_t delivered = 0;
  {
    Listener listener(path);
    reader.accept_from(listener.fd);
    // All of them in the backlog, hung up, before the reader accepts.
    for (int i = 0; i < k_clients; ++i) {
      const int client = listener.connect();
      write_all(client, "{\"a\":\"" + line + "\"}\n{\"b\":\"" + line + "\"}\n");
      ::close(client);
    }
    for (int i = 0; i < 200 && ended < k_clients; ++i) {
      std::vector<ingest::IngestChunk> some;
      queue.pop_all(some, milliseconds(50));
      for (const auto& chunk : some) {
        for (const auto& l : chunk.lines) {
          line_bytes += l.size;
        }
        delivered += chunk.lines.size();
        ended += chunk.end_of_channel ? 1 : 0;
      }
    }
    reader.stop_accepting();
  }
  ::unlink(path.c_str());
  ::rmdir(dir);
  EXPECT_EQ(ended, k_clients);
  // The bound (four times the queue's for these reads) is checked before each
  // read: one connection's lines may cross it, no more. (Each connection's
  // end still goes to the pipeline, a small chunk without lines, bounded by
  // the connections a uid holds.)
  EXPECT_LE(line_bytes, 4 * k_limit + 2 * (line.size() + 8));
  EXPECT_GT(sink.counters().dropped_lines.load(), 0u);
  EXPECT_EQ(delivered + sink.counters().dropped_lines.load(), 2u * k_clients) << "every line kept or counted";
}

}  // namespace
}  // namespace trace2d::source
