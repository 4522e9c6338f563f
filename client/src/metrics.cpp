#include "client/src/metrics.hpp"

#include <algorithm>

namespace trace2d::client::detail {

int MetricRegistry::define(MetricKind kind, std::string_view category, std::string_view name,
                           bool per_thread) {
  std::lock_guard lock(m_mutex);
  Table& t = table(kind);
  const int n = t.count.load(std::memory_order_relaxed);
  for (int id = 0; id < n; ++id) {
    const MetricInfo& e = t.entries[static_cast<std::size_t>(id)];
    if (e.category == category && e.name == name) {
      return id;
    }
  }
  if (n >= k_max_metrics) {
    return -1;
  }
  MetricInfo& e = t.entries[static_cast<std::size_t>(n)];
  e.category = std::string(category);
  e.name = std::string(name);
  e.per_thread = per_thread;
  t.count.store(n + 1, std::memory_order_release);
  return n;
}

int MetricRegistry::count(MetricKind kind) const {
  return table(kind).count.load(std::memory_order_acquire);
}

const MetricInfo& MetricRegistry::info(MetricKind kind, int id) const {
  return table(kind).entries[static_cast<std::size_t>(id)];
}

MetricRegistry& MetricRegistry::instance() {
  // Never destroyed: static Timer objects and exit-time code use it.
  static auto* registry = new MetricRegistry();
  return *registry;
}

void TimerTotal::add(const TimerSlot& slot) {
  TimerTotal one;
  one.total_ns = slot.total_ns.load(std::memory_order_relaxed);
  one.min_ns = slot.min_ns.load(std::memory_order_relaxed);
  one.max_ns = slot.max_ns.load(std::memory_order_relaxed);
  one.intervals = slot.intervals.load(std::memory_order_relaxed);
  add(one);
}

void TimerTotal::add(const TimerTotal& other) {
  if (other.intervals == 0) {
    return;
  }
  if (intervals == 0) {
    min_ns = other.min_ns;
    max_ns = other.max_ns;
  } else {
    min_ns = std::min(min_ns, other.min_ns);
    max_ns = std::max(max_ns, other.max_ns);
  }
  intervals += other.intervals;
  total_ns += other.total_ns;
}

void start_interval(TimerSlot& slot, std::int64_t now_ns) {
  if (++slot.recursion == 1) {
    slot.started_ns = now_ns;
  }
}

void stop_interval(TimerSlot& slot, std::int64_t now_ns) {
  if (slot.recursion == 0 || --slot.recursion > 0) {
    return;
  }
  const auto interval =
      static_cast<std::uint64_t>(std::max<std::int64_t>(now_ns - slot.started_ns, 0));
  const std::uint64_t n = slot.intervals.load(std::memory_order_relaxed);
  const std::uint64_t min = slot.min_ns.load(std::memory_order_relaxed);
  const std::uint64_t max = slot.max_ns.load(std::memory_order_relaxed);
  slot.min_ns.store(n == 0 ? interval : std::min(min, interval), std::memory_order_relaxed);
  slot.max_ns.store(n == 0 ? interval : std::max(max, interval), std::memory_order_relaxed);
  slot.total_ns.store(slot.total_ns.load(std::memory_order_relaxed) + interval,
                      std::memory_order_relaxed);
  slot.intervals.store(n + 1, std::memory_order_relaxed);
}

}  // namespace trace2d::client::detail
