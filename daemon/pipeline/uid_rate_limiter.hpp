#pragma once
// Per-user admission: a token bucket per uid (as the kernel reported it), so
// that one user's flood cannot crowd everyone else out of the database.
// Lines beyond the rate are dropped and counted for that uid.

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

  // Whether a line from `uid` may go on (unknown uids share one bucket).
  bool admit(std::optional<std::int64_t> uid, std::int64_t now_us);

  [[nodiscard]] const std::map<std::int64_t, Counts>& counts() const { return m_counts; }
  [[nodiscard]] bool limited() const { return m_rate > 0; }

  static constexpr std::int64_t k_unknown_uid = -1;

 private:
  struct Bucket {
    double tokens = 0;
    std::int64_t refilled_us = 0;
  };
  std::uint64_t m_rate;
  std::map<std::int64_t, Bucket> m_buckets;
  std::map<std::int64_t, Counts> m_counts;
};

}  // namespace trace2d::pipeline
