#include "daemon/pipeline/uid_rate_limiter.hpp"

#include <algorithm>

namespace trace2d::pipeline {

bool UidRateLimiter::take_token(std::int64_t key, std::int64_t now_us) {
  // Bursts of up to two seconds' worth pass: git sends a command's events
  // in a burst, then nothing.
  const double capacity = 2.0 * static_cast<double>(m_rate);
  auto [it, inserted] = m_buckets.try_emplace(key, Bucket{capacity, now_us});
  Bucket& bucket = it->second;
  if (!inserted) {
    const double elapsed_s = static_cast<double>(std::max<std::int64_t>(0, now_us - bucket.refilled_us)) / 1e6;
    bucket.tokens = std::min(capacity, bucket.tokens + elapsed_s * static_cast<double>(m_rate));
    bucket.refilled_us = now_us;
  }
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
    return true;
  }
  return false;
}

}  // namespace trace2d::pipeline
