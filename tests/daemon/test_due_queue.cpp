// DueQueue (daemon/source/due_queue.hpp): the stream reader's paced
// connections, soonest first, each delay in the order it was put off.

#include "daemon/source/due_queue.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace trace2d::source {
namespace {

using Clock = DueQueue<int>::Clock;
using std::chrono::milliseconds;

TEST(DueQueue, ItemsFallDueSoonestFirstAcrossDelays) {
  DueQueue<int> queue;
  int a = 1;
  int b = 2;
  int c = 3;
  const Clock::time_point t0{};
  queue.put_off(&a, t0, milliseconds(5));                    // due at 5
  queue.put_off(&b, t0 + milliseconds(1), milliseconds(1));  // due at 2
  queue.put_off(&c, t0 + milliseconds(2), milliseconds(5));  // due at 7
  EXPECT_EQ(queue.size(), 3U);
  EXPECT_EQ(queue.next_due(), t0 + milliseconds(2));
  EXPECT_EQ(queue.take_due(t0 + milliseconds(1)), nullptr);  // none due yet
  EXPECT_EQ(queue.take_due(t0 + milliseconds(6)), &b);
  EXPECT_EQ(queue.take_due(t0 + milliseconds(6)), &a);
  EXPECT_EQ(queue.take_due(t0 + milliseconds(6)), nullptr);  // c is due at 7
  EXPECT_EQ(queue.next_due(), t0 + milliseconds(7));
  EXPECT_EQ(queue.take_due(t0 + milliseconds(7)), &c);
  EXPECT_TRUE(queue.empty());
  EXPECT_FALSE(queue.next_due().has_value());
}

TEST(DueQueue, AForgottenItemNeverFallsDue) {
  DueQueue<int> queue;
  std::vector<int> items(5);
  std::vector<DueQueue<int>::Handle> handles;
  const Clock::time_point t0{};
  for (std::size_t i = 0; i < items.size(); ++i) {
    handles.push_back(queue.put_off(&items[i], t0 + milliseconds(i), milliseconds(10)));
  }
  queue.forget(handles[0]);  // the first, the middle and the last
  queue.forget(handles[2]);
  queue.forget(handles[4]);
  EXPECT_EQ(queue.size(), 2U);
  EXPECT_EQ(queue.next_due(), t0 + milliseconds(11));
  EXPECT_EQ(queue.take_due(t0 + milliseconds(100)), &items[1]);
  EXPECT_EQ(queue.take_due(t0 + milliseconds(100)), &items[3]);
  EXPECT_EQ(queue.take_due(t0 + milliseconds(100)), nullptr);
}

TEST(DueQueue, AnEarlierClockReadingKeepsTheLaneInOrder) {
  // The caller's clock never goes back; were it read out of order, an item
  // is kept behind the one put off before it rather than overtaking it.
  DueQueue<int> queue;
  int first = 1;
  int second = 2;
  const Clock::time_point t0{};
  queue.put_off(&first, t0 + milliseconds(3), milliseconds(2));  // due at 5
  queue.put_off(&second, t0, milliseconds(2));                   // would be 2: kept at 5
  EXPECT_EQ(queue.next_due(), t0 + milliseconds(5));
  EXPECT_EQ(queue.take_due(t0 + milliseconds(4)), nullptr);
  EXPECT_EQ(queue.take_due(t0 + milliseconds(5)), &first);
  EXPECT_EQ(queue.take_due(t0 + milliseconds(5)), &second);
}

TEST(DueQueue, TakeAllEmptiesEveryLane) {
  DueQueue<int> queue;
  int a = 1;
  int b = 2;
  const Clock::time_point t0{};
  queue.put_off(&a, t0, milliseconds(1));
  queue.put_off(&b, t0, milliseconds(2));
  const std::vector<int*> all = queue.take_all();
  EXPECT_EQ(all, (std::vector<int*>{&a, &b}));
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.take_due(t0 + milliseconds(10)), nullptr);
}

}  // namespace
}  // namespace trace2d::source
