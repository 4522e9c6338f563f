// The memory bound between readers and SQLite, and the wait an import uses.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "daemon/ingest/memory_budget.hpp"

namespace trace2d::ingest {
namespace {

using namespace std::chrono_literals;

TEST(MemoryBudget, ExhaustedAtItsLimitAndPeakRemembered) {
  MemoryBudget budget(100);
  budget.charge(60);
  EXPECT_FALSE(budget.exhausted());
  budget.charge(40);
  EXPECT_TRUE(budget.exhausted());
  budget.release(70);
  EXPECT_FALSE(budget.exhausted());
  EXPECT_EQ(budget.used(), 30u);
  EXPECT_EQ(budget.peak(), 100u);
}

TEST(MemoryBudget, WaitForRoomReturnsAtOnceUnderTheLimit) {
  MemoryBudget budget(100);
  budget.charge(99);
  budget.wait_for_room();  // would hang the test if it waited
  EXPECT_EQ(budget.used(), 99u);
}

TEST(MemoryBudget, WaitForRoomWakesWhenAReleaseBringsItUnderTheLimit) {
  MemoryBudget budget(100);
  budget.charge(150);
  std::atomic<bool> woke{false};
  std::thread waiter([&] {
    budget.wait_for_room();
    woke.store(true);
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(woke.load()) << "returned while over the limit";
  budget.release(30);  // 120: still over
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(woke.load()) << "returned while still over the limit";
  budget.release(30);  // 90
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!woke.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(woke.load());
  waiter.join();
}

}  // namespace
}  // namespace trace2d::ingest
