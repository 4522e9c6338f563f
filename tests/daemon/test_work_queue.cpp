// The hand-off between threads: a consumer waiting for many items is not
// woken by each one, yet an urgent item or the end of input wakes it.

#include "daemon/ingest/work_queue.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace trace2d::ingest {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

TEST(WorkQueue, AnEagerConsumerWakesForTheFirstItem) {
  WorkQueue<int> queue;
  std::thread producer([&] {
    std::this_thread::sleep_for(milliseconds(20));
    queue.push(1);
  });
  std::vector<int> out;
  const auto start = Clock::now();
  EXPECT_TRUE(queue.pop_all(out, milliseconds(10000)));
  EXPECT_LT(Clock::now() - start, milliseconds(5000));
  EXPECT_EQ(out, std::vector<int>{1});
  producer.join();
}

TEST(WorkQueue, AConsumerWaitingForManySleepsThroughFewThenTakesThemAll) {
  WorkQueue<int> queue;
  std::thread producer([&] {
    std::this_thread::sleep_for(milliseconds(20));
    queue.push(1);
    queue.push(2);
  });
  std::vector<int> out;
  const auto start = Clock::now();
  EXPECT_TRUE(queue.pop_all(out, milliseconds(300), 3));
  EXPECT_GE(Clock::now() - start, milliseconds(300)) << "two items of three woke it";
  EXPECT_EQ(out, (std::vector<int>{1, 2}));
  producer.join();
}

TEST(WorkQueue, EnoughItemsAnUrgentOneOrTheEndWakeAConsumerWaitingForMany) {
  for (const int how : {0, 1, 2}) {
    SCOPED_TRACE(how);
    WorkQueue<int> queue;
    std::thread producer([&] {
      std::this_thread::sleep_for(milliseconds(20));
      if (how == 0) {
        for (int i = 0; i < 3; ++i) {
          queue.push(i);
        }
      } else if (how == 1) {
        queue.push(7, true);
      } else {
        queue.push(7);
        queue.close();
      }
    });
    std::vector<int> out;
    const auto start = Clock::now();
    queue.pop_all(out, milliseconds(10000), 3);
    EXPECT_LT(Clock::now() - start, milliseconds(5000));
    EXPECT_FALSE(out.empty());
    producer.join();
  }
}

TEST(WorkQueue, ClosedAndDrainedMeansDone) {
  WorkQueue<int> queue;
  queue.push(1);
  queue.close();
  std::vector<int> out;
  EXPECT_TRUE(queue.pop_all(out, milliseconds(10)));
  EXPECT_FALSE(queue.pop_all(out, milliseconds(10)));
  EXPECT_EQ(out, std::vector<int>{1});
}

}  // namespace
}  // namespace trace2d::ingest
