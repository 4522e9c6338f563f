#pragma once
// Timers and counters as git's trace2/tr2_tmr.c and tr2_ctr.c keep them:
// definitions are process-wide (a program defines them once, often as
// statics, possibly before the session starts); values are kept per thread
// without locks and added up when a thread ends and at exit.

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>

namespace trace2d::client::detail {

inline constexpr int k_max_metrics = 64;

struct MetricInfo {
  std::string category;
  std::string name;
  bool per_thread = false;
};

enum class MetricKind { timer, counter };

// Definitions. Entries are never removed, and published with a release
// store of the count, so reading them needs no lock.
class MetricRegistry {
 public:
  // The id of (category, name), defining it if new; -1 when full.
  int define(MetricKind kind, std::string_view category, std::string_view name, bool per_thread);
  [[nodiscard]] int count(MetricKind kind) const;
  [[nodiscard]] const MetricInfo& info(MetricKind kind, int id) const;

  static MetricRegistry& instance();

 private:
  struct Table {
    std::array<MetricInfo, k_max_metrics> entries;
    std::atomic<int> count{0};
  };
  Table& table(MetricKind kind) { return kind == MetricKind::timer ? m_timers : m_counters; }
  [[nodiscard]] const Table& table(MetricKind kind) const {
    return kind == MetricKind::timer ? m_timers : m_counters;
  }

  std::mutex m_mutex;
  Table m_timers;
  Table m_counters;
};

// One thread's stopwatch. Written by its thread only; atomics (relaxed)
// because exit reads the threads that are still running.
struct TimerSlot {
  std::int64_t started_ns = 0;
  int recursion = 0;  // nested start()s count once, as in git
  std::atomic<std::uint64_t> total_ns{0};
  std::atomic<std::uint64_t> min_ns{0};
  std::atomic<std::uint64_t> max_ns{0};
  std::atomic<std::uint64_t> intervals{0};
};

// Totals, as git's tr2_add_timer() adds them.
struct TimerTotal {
  std::uint64_t total_ns = 0;
  std::uint64_t min_ns = 0;
  std::uint64_t max_ns = 0;
  std::uint64_t intervals = 0;

  void add(const TimerSlot& slot);
  void add(const TimerTotal& other);
};

void start_interval(TimerSlot& slot, std::int64_t now_ns);
void stop_interval(TimerSlot& slot, std::int64_t now_ns);

}  // namespace trace2d::client::detail
