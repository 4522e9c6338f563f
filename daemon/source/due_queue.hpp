#pragma once
// Items waiting for a time, soonest first, for a reader that puts an item
// off by one of a few fixed delays (the stream reader's read pacing and its
// memory-bound retry). Items put off by the same delay fall due in the
// order they were put off, so each delay keeps a first-in first-out lane:
// putting off, taking out and forgetting an item are O(1), where an ordered
// map of times cost O(log n) in the number of connections for every read of
// a git process writing a line at a time (a twelfth of the stream
// thread's time in the short-process benchmark, in its rebalancing).

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <list>
#include <optional>
#include <vector>

namespace trace2d::source {

template <typename Item>
class DueQueue {
 public:
  using Clock = std::chrono::steady_clock;

  // Where an item waits: kept by its owner to forget it (forget()).
  struct Handle {
    std::size_t lane = 0;
    typename std::list<std::pair<Clock::time_point, Item*>>::iterator at;
  };

  // `item` falls due at now + delay. `now` is the caller's clock reading,
  // which never goes back: a lane stays sorted when the new time is not
  // before its last (it is kept at the lane's last time otherwise).
  Handle put_off(Item* item, Clock::time_point now, Clock::duration delay) {
    std::size_t lane = 0;
    while (lane < m_lanes.size() && m_lanes[lane].delay != delay) {
      ++lane;
    }
    if (lane == m_lanes.size()) {
      m_lanes.push_back(Lane{delay, {}});
    }
    auto& items = m_lanes[lane].items;
    const Clock::time_point due = items.empty() ? now + delay : std::max(now + delay, items.back().first);
    items.emplace_back(due, item);
    return Handle{lane, std::prev(items.end())};
  }

  void forget(const Handle& handle) { m_lanes[handle.lane].items.erase(handle.at); }

  [[nodiscard]] std::size_t size() const {
    std::size_t size = 0;
    for (const Lane& lane : m_lanes) {
      size += lane.items.size();
    }
    return size;
  }
  [[nodiscard]] bool empty() const { return size() == 0; }

  // The soonest time an item falls due.
  [[nodiscard]] std::optional<Clock::time_point> next_due() const {
    std::optional<Clock::time_point> next;
    for (const Lane& lane : m_lanes) {
      if (!lane.items.empty() && (!next || lane.items.front().first < *next)) {
        next = lane.items.front().first;
      }
    }
    return next;
  }

  // Takes out an item due by `now`, the soonest; nullptr when none is.
  Item* take_due(Clock::time_point now) {
    Lane* soonest = nullptr;
    for (Lane& lane : m_lanes) {
      if (!lane.items.empty() && lane.items.front().first <= now &&
          (soonest == nullptr || lane.items.front().first < soonest->items.front().first)) {
        soonest = &lane;
      }
    }
    if (soonest == nullptr) {
      return nullptr;
    }
    Item* item = soonest->items.front().second;
    soonest->items.pop_front();
    return item;
  }

  // Takes out every item, soonest first in each lane.
  std::vector<Item*> take_all() {
    std::vector<Item*> all;
    all.reserve(size());
    for (Lane& lane : m_lanes) {
      for (const auto& [due, item] : lane.items) {
        all.push_back(item);
      }
      lane.items.clear();
    }
    return all;
  }

 private:
  struct Lane {
    Clock::duration delay;
    std::list<std::pair<Clock::time_point, Item*>> items;
  };
  std::vector<Lane> m_lanes;  // a few: one for each delay used
};

}  // namespace trace2d::source
