// The writer: a bounded queue that never blocks the caller, drops and counts
// when full, and at exit gets the final lines through even when the
// collector has stopped reading (they wait in the kernel until it resumes).

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <tuple>
#include <atomic>

#include "client/src/writer.hpp"
#include "tests/support/sanitizers.hpp"

namespace trace2d::client::detail {
namespace {

using Clock = std::chrono::steady_clock;

struct Pair {
  int ours = -1;
  int collector = -1;
  explicit Pair(int type) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds), 0);
    ours = fds[0];
    collector = fds[1];
  }
  ~Pair() {
    if (collector >= 0) {
      ::close(collector);
    }
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
};

std::unique_ptr<Writer> make_writer(const Pair& pair, SinkKind kind, std::size_t queue_bytes) {
  return std::make_unique<Writer>(std::make_unique<Sink>(Destination{kind, pair.ours, true, false}),
                                  queue_bytes);
}

std::string line(int n) {
  return "{\"n\":" + std::to_string(n) + ",\"pad\":\"" + std::string(150, 'x') + "\"}\n";
}

// Everything readable now from a stream socket.
std::string read_available(int fd) {
  std::string all;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n <= 0) {
      return all;
    }
    all.append(buffer, static_cast<std::size_t>(n));
  }
}

long count_lines_starting(const std::string& text, const std::string& prefix) {
  long n = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = text.find('\n', pos);
    if (text.compare(pos, prefix.size(), prefix) == 0) {
      ++n;
    }
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  return n;
}

Writer::ComposeFinal final_line() {
  return [](std::uint64_t dropped) { return "FINAL " + std::to_string(dropped) + "\n"; };
}

std::uint64_t reported_drops(const std::string& text) {
  const auto at = text.rfind("FINAL ");
  return at == std::string::npos ? ~std::uint64_t{0} : std::stoull(text.substr(at + 6));
}

TEST(ClientWriter, StoppedCollectorDropsCountsAndStillGetsTheFinalLine) {
  Pair pair(SOCK_STREAM);
  auto writer = make_writer(pair, SinkKind::stream, 64 * 1024);
  constexpr int k_lines = 20000;
  const auto started = Clock::now();
  int refused = 0;
  for (int i = 0; i < k_lines; ++i) {
    refused += writer->push(line(i)) ? 0 : 1;
  }
  const auto pushing = Clock::now() - started;
  EXPECT_GT(refused, 0) << "nobody reads: the queue must fill";
  // A push that waited for the collector would wait for good: the bound
  // only has to hold 20,000 formatted lines, slower under the sanitizers.
  EXPECT_LT(pushing, std::chrono::milliseconds(500) * trace2d::test::k_slow)
      << "pushing never waits for the collector";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // long stalled by now

  const auto finishing = Clock::now();
  writer->finish(final_line(), std::chrono::milliseconds(150));
  EXPECT_LT(Clock::now() - finishing, std::chrono::milliseconds(60))
      << "a stalled collector is given up on at once";
  EXPECT_FALSE(writer->push(line(-1)));

  // The collector resumes: whole lines, then the final line with the count.
  const std::string received = read_available(pair.collector);
  ASSERT_FALSE(received.empty());
  EXPECT_EQ(received.back(), '\n');
  const long regular = count_lines_starting(received, "{\"n\":");
  EXPECT_EQ(count_lines_starting(received, "FINAL "), 1);
  EXPECT_EQ(static_cast<std::uint64_t>(regular) + reported_drops(received),
            static_cast<std::uint64_t>(k_lines));
  EXPECT_EQ(writer->dropped(), reported_drops(received));
}

// Ordinary lines leave the queue's last sixteenth free: a child's start
// and exit still fit when a flood has filled the rest.
TEST(ClientWriter, AChildsLinesFitWhereOrdinaryLinesNoLongerDo) {
  Pair pair(SOCK_STREAM);
  auto writer = make_writer(pair, SinkKind::stream, 64 * 1024);
  int refused = 0;
  for (int i = 0; i < 20000; ++i) {
    refused += writer->push(line(i)) ? 0 : 1;
  }
  ASSERT_GT(refused, 0) << "nobody reads: the queue must fill";
  EXPECT_FALSE(writer->has_room(line(0).size()));
  EXPECT_FALSE(writer->push(line(-1)));
  const std::string child = "{\"child\":" + std::string(200, 'c') + "}\n";
  EXPECT_TRUE(writer->push(child, Writer::Line::stitching));
  EXPECT_TRUE(writer->push(child, Writer::Line::stitching));
  EXPECT_FALSE(writer->push(line(-2)));
  writer->finish(final_line(), std::chrono::milliseconds(150));
  const std::string received = read_available(pair.collector);
  EXPECT_EQ(writer->dropped(), reported_drops(received));
}

// flush() returns once everything pushed before it is in the kernel, and
// well before its timeout when the collector reads; a stopped collector
// makes it wait no longer than the timeout and say so.
TEST(ClientWriter, FlushHandsOverWhatWasPushedOrSaysItCouldNot) {
  Pair pair(SOCK_STREAM);
  auto writer = make_writer(pair, SinkKind::stream, 1024 * 1024);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(writer->push(line(i)));
  }
  const auto started = Clock::now();
  EXPECT_TRUE(writer->flush(std::chrono::milliseconds(1000)));
  EXPECT_LT(Clock::now() - started, std::chrono::milliseconds(500)) << "no lingering wait";
  EXPECT_EQ(count_lines_starting(read_available(pair.collector), "{\"n\":"), 10)
      << "flushed means readable by the collector now";

  // Nobody reads: fill the socket, then a flush times out and says false.
  int pushed = 0;
  while (pushed < 20000 && writer->push(line(pushed))) {
    ++pushed;
  }
  const auto stalled = Clock::now();
  EXPECT_FALSE(writer->flush(std::chrono::milliseconds(100)));
  const auto waited = Clock::now() - stalled;
  EXPECT_GE(waited, std::chrono::milliseconds(100));
  EXPECT_LT(waited, std::chrono::milliseconds(400)) << "bounded by its timeout";
  EXPECT_TRUE(writer->accepting()) << "a flush does not end the writer";
}

// has_room() refuses only what push() would refuse: before formatting an
// event, the caller can drop it for the price of one atomic load.
TEST(ClientWriter, HasRoomAgreesWithPush) {
  Pair pair(SOCK_STREAM);
  auto writer = make_writer(pair, SinkKind::stream, 4096);
  const std::string one = line(0);
  EXPECT_TRUE(writer->has_room(one.size()));
  EXPECT_FALSE(writer->has_room(4097));
  const std::uint64_t before = writer->dropped();
  writer->count_drop();
  EXPECT_EQ(writer->dropped(), before + 1);
}

TEST(ClientWriter, LiveCollectorGetsEverythingAccountedFor) {
  Pair pair(SOCK_STREAM);
  auto writer = make_writer(pair, SinkKind::stream, 256 * 1024);
  std::string received;
  std::atomic<bool> done{false};
  std::thread collector([&] {
    while (!done) {
      received += read_available(pair.collector);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    received += read_available(pair.collector);
  });
  constexpr int k_lines = 50000;
  for (int i = 0; i < k_lines; ++i) {
    writer->push(line(i));
    if (i % 500 == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a program, not a flood
    }
  }
  writer->finish(final_line(), std::chrono::milliseconds(2000));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  done = true;
  collector.join();
  const long regular = count_lines_starting(received, "{\"n\":");
  EXPECT_EQ(static_cast<std::uint64_t>(regular) + reported_drops(received),
            static_cast<std::uint64_t>(k_lines));
  EXPECT_GT(regular, k_lines / 2);
}

// At exit a collector that keeps taking the queue is waited for past the
// timeout, as git waits for its own writes: a queue that needs ~500 ms at
// the collector's pace is handed over whole with the default 150 ms. An
// explicit shutdown keeps to its timeout, and a collector that stops
// taking is still given up on.
TEST(ClientWriter, AtExitACollectorThatKeepsTakingIsWaitedFor) {
  constexpr int k_lines = 25000;  // about 4 MiB
  const auto run = [&](Writer::Patience patience, bool collector_stops) {
    Pair pair(SOCK_STREAM);
    auto writer = make_writer(pair, SinkKind::stream, 16 * 1024 * 1024);
    std::string received;
    std::atomic<bool> pushed{false};
    std::atomic<bool> done{false};
    // The collector starts taking once the burst is queued (however slow
    // pushing is, under a sanitizer too), at about 8 MB/s: most of the
    // burst is still queued when the program exits.
    std::thread collector([&] {
      while (!pushed) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      char buffer[16384];
      while (!done && !(collector_stops && received.size() > 1024 * 1024)) {
        const ssize_t n = ::recv(pair.collector, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n > 0) {
          received.append(buffer, static_cast<std::size_t>(n));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
    for (int i = 0; i < k_lines; ++i) {
      EXPECT_TRUE(writer->push(line(i)));
    }
    pushed = true;
    const auto finishing = Clock::now();
    const bool whole = writer->finish(final_line(), std::chrono::milliseconds(150), patience);
    const auto waited = Clock::now() - finishing;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    done = true;
    collector.join();
    received += read_available(pair.collector);
    const long regular = count_lines_starting(received, "{\"n\":");
    EXPECT_EQ(static_cast<std::uint64_t>(regular) + reported_drops(received), static_cast<std::uint64_t>(k_lines));
    return std::tuple{whole, regular, waited};
  };
  const auto [whole, regular, waited] = run(Writer::Patience::while_taken, false);
  EXPECT_TRUE(whole);
  EXPECT_EQ(regular, k_lines) << "every line handed over";
  EXPECT_GT(waited, std::chrono::milliseconds(150)) << "past the timeout, while the collector took the queue";

  const auto [strict_whole, strict_regular, strict_waited] = run(Writer::Patience::timeout, false);
  EXPECT_FALSE(strict_whole);
  EXPECT_LT(strict_regular, k_lines);
  EXPECT_LT(strict_waited, std::chrono::milliseconds(400)) << "an explicit shutdown keeps to its timeout";

  const auto [stopped_whole, stopped_regular, stopped_waited] = run(Writer::Patience::while_taken, true);
  EXPECT_FALSE(stopped_whole);
  EXPECT_LT(stopped_regular, k_lines);
  EXPECT_LT(stopped_waited, std::chrono::milliseconds(3000)) << "a collector that stops taking is given up on";
}

TEST(ClientWriter, DatagramsCarryOneLineEach) {
  Pair pair(SOCK_DGRAM);
  auto writer = make_writer(pair, SinkKind::dgram, 1 << 20);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(writer->push(line(i)));
  }
  writer->finish(final_line(), std::chrono::milliseconds(500));
  char buffer[4096];
  for (int i = 0; i < 5; ++i) {
    const ssize_t n = ::recv(pair.collector, buffer, sizeof buffer, MSG_DONTWAIT);
    ASSERT_EQ(std::string(buffer, static_cast<std::size_t>(n)), line(i));
  }
  const ssize_t n = ::recv(pair.collector, buffer, sizeof buffer, MSG_DONTWAIT);
  EXPECT_EQ(std::string(buffer, static_cast<std::size_t>(n)), "FINAL 0\n");
}

TEST(ClientWriter, ClosedCollectorTurnsItOffWithoutSigpipe) {
  Pair pair(SOCK_STREAM);
  auto writer = make_writer(pair, SinkKind::stream, 1 << 20);
  ::close(pair.collector);
  pair.collector = -1;
  for (int i = 0; i < 1000 && writer->accepting(); ++i) {
    writer->push(line(i));
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  // Still alive: no SIGPIPE reached this process.
  for (int i = 0; i < 200 && writer->accepting(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(writer->accepting());
}

TEST(ClientWriter, IdleWriterWakesForTheNextLine) {
  Pair pair(SOCK_STREAM);
  auto writer = make_writer(pair, SinkKind::stream, 1 << 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // asleep by now
  ASSERT_TRUE(writer->push(line(1)));
  std::string received;
  for (int i = 0; i < 100 && received.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    received += read_available(pair.collector);
  }
  EXPECT_EQ(received, line(1));
  for (int i = 0; i < 100 && !writer->drained(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(writer->drained());
}

// Regression: with no room left, a fresh buffer (position 0) once went out
// whole into the reserve, and the exit events then found the socket full.
TEST(ClientSink, RegularLinesNeverTakeTheReserveEvenFromAFreshBuffer) {
  Pair pair(SOCK_STREAM);
  Sink sink(Destination{SinkKind::stream, pair.ours, false, false});
  std::uint64_t dropped = 0;
  const auto write_fresh = [&](const std::string& bytes, bool regular) {
    std::size_t pos = 0;
    const WriteResult result = sink.write(bytes, pos, regular, dropped);
    EXPECT_TRUE(pos == 0 || pos == bytes.size()) << "whole lines only";
    return result;
  };
  // Fill up to the reserve with ordinary lines, then with the smallest
  // lines there are, so that what is left is at most the reserve.
  int sent = 0;
  while (sent < 100000 && write_fresh(line(sent), true) == WriteResult::done) {
    ++sent;
  }
  for (int i = 0; i < 1000 && write_fresh("x\n", true) == WriteResult::done; ++i) {
  }
  ASSERT_GT(sent, 100);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(write_fresh(line(i), true), WriteResult::would_block);
  }
  // The final lines (about 1 KiB at exit) still fit.
  EXPECT_EQ(write_fresh("FINAL " + std::string(2000, 'f') + "\n", false), WriteResult::done);
  EXPECT_EQ(dropped, 0u);
  ::close(pair.ours);
}

}  // namespace
}  // namespace trace2d::client::detail
