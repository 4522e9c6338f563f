#include "daemon/store/commit_latency.hpp"

#include <algorithm>
#include <vector>

namespace trace2d::store {

void CommitLatencyRecorder::record(double ms) {
  std::lock_guard lock(m_mutex);
  m_recent_ms[m_count++ % m_recent_ms.size()] = ms;
  const auto& bounds = CommitLatencyHistogram::k_bounds_s;
  const double seconds = ms / 1000.0;
  // A bucket counts what is at most its bound (Prometheus's `le`).
  const auto bucket = std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin();
  ++m_histogram.buckets[static_cast<std::size_t>(bucket)];
  m_histogram.sum_s += seconds;
  ++m_histogram.count;
}

CommitLatency CommitLatencyRecorder::recent() const {
  std::lock_guard lock(m_mutex);
  const std::size_t n = std::min(m_count, m_recent_ms.size());
  if (n == 0) {
    return {};
  }
  std::vector<double> sorted(m_recent_ms.begin(), m_recent_ms.begin() + static_cast<std::ptrdiff_t>(n));
  std::sort(sorted.begin(), sorted.end());
  const auto at = [&](double q) {
    return sorted[std::min(n - 1, static_cast<std::size_t>(q * static_cast<double>(n)))];
  };
  return {at(0.5), at(0.99), sorted.back(), n};
}

CommitLatencyHistogram CommitLatencyRecorder::histogram() const {
  std::lock_guard lock(m_mutex);
  return m_histogram;
}

}  // namespace trace2d::store
