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

// Work-conserving shares: a uid alone may hold the whole bound; once
// another holds some, each has half, and the one over its half yields
// while the other reads on.
TEST(MemoryBudget, AUidAloneHasTheWholeBoundAndOthersAnEqualShare) {
  MemoryBudget budget(100);
  budget.charge(90, 1000);
  EXPECT_FALSE(budget.over_share(1000)) << "alone: the whole bound";
  EXPECT_FALSE(budget.over_share(0)) << "a newcomer holding nothing is under any share";
  budget.charge(1, 0);
  EXPECT_TRUE(budget.over_share(1000)) << "two hold some: 90 is over a half";
  EXPECT_FALSE(budget.over_share(0));
  budget.charge(49, 0);
  EXPECT_TRUE(budget.over_share(0)) << "at its half";
  EXPECT_EQ(budget.held(0), 50u);
  EXPECT_EQ(budget.used(), 140u);
  budget.release(50, 0);
  EXPECT_EQ(budget.held(0), 0u);
  EXPECT_FALSE(budget.over_share(1000)) << "alone again";
  budget.charge(20);  // no uid (the store's batches): in the total only
  EXPECT_FALSE(budget.over_share(1000));
  budget.charge(10, 1000);
  EXPECT_TRUE(budget.over_share(1000));
  EXPECT_TRUE(budget.exhausted());
}

// What has no uid (the store's batches beyond their events' bytes) counts
// in the total only: the uids' room is theirs.
TEST(MemoryBudget, WhatHasNoUidDoesNotHoldBackAUidUnderItsShare) {
  MemoryBudget budget(100);
  budget.charge(300);
  EXPECT_FALSE(budget.over_share(1000));
  budget.charge(5, 1000);
  EXPECT_FALSE(budget.over_share(1000));
  EXPECT_TRUE(budget.exhausted());
  budget.charge(95, 1000);
  EXPECT_TRUE(budget.over_share(1000));
  EXPECT_FALSE(budget.over_share(0));
}

}  // namespace
}  // namespace trace2d::ingest
