#pragma once
// The rate valve: a token bucket per uid (as the kernel reported it), a
// safety valve against a flood that the memory shares alone would let
// through at full speed. It is work-conserving: a line beyond the rate is
// dropped only while its uid also holds its share of the memory bound
// (MemoryBudget::over_share), i.e. while the pipeline has no room for it;
// otherwise it goes on. Dropped lines are counted for that uid (here, with
// the memory bound's drops: count_dropped()) and on their sessions.

#include <cstdint>
#include <map>
#include <optional>

namespace trace2d::pipeline {

class UidRateLimiter {
 public:
  struct Counts {
    std::uint64_t lines = 0;
    std::uint64_t dropped = 0;
  };

  // 0: no limit (every line admitted, still counted).
  explicit UidRateLimiter(std::uint64_t lines_per_second) : m_rate(lines_per_second) {}

  // Whether a line from `uid` may go on (unknown uids share one bucket):
  // beyond the rate, only while `over_share(uid)` says the pipeline is
  // pressed by it. Asked for lines beyond the rate only, so it costs
  // nothing in the common case.
  template <typename OverShare>
  bool admit(std::optional<std::int64_t> uid, std::int64_t now_us, OverShare&& over_share) {
    const std::int64_t key = uid.value_or(k_unknown_uid);
    Counts& counts = m_counts[key];
    ++counts.lines;
    if (m_rate == 0 || take_token(key, now_us) || !over_share(key)) {
      return true;
    }
    ++counts.dropped;
    return false;
  }
  // Lines of `uid` read and dropped elsewhere (the memory bound): counted
  // with the rest, so that uid_stats holds every line dropped.
  void count_dropped(std::optional<std::int64_t> uid, std::uint64_t lines) {
    Counts& counts = m_counts[uid.value_or(k_unknown_uid)];
    counts.lines += lines;
    counts.dropped += lines;
  }

  [[nodiscard]] const std::map<std::int64_t, Counts>& counts() const { return m_counts; }
  [[nodiscard]] bool limited() const { return m_rate > 0; }

  static constexpr std::int64_t k_unknown_uid = -1;

 private:
  bool take_token(std::int64_t key, std::int64_t now_us);
  struct Bucket {
    double tokens = 0;
    std::int64_t refilled_us = 0;
  };
  std::uint64_t m_rate;
  std::map<std::int64_t, Bucket> m_buckets;
  std::map<std::int64_t, Counts> m_counts;
};

}  // namespace trace2d::pipeline
