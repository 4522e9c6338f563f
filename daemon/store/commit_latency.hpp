#pragma once
// Time from reading a line to committing it: over the last commits (for
// `trace2ctl status`), and in buckets since the start (for /metrics). The
// store writer records; the status reporter and /metrics read, from other
// threads.

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace trace2d::store {

// Over recent commits.
struct CommitLatency {
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
  std::size_t samples = 0;
};

// The same time for every batch committed since the start, in buckets:
// what /metrics offers as a histogram (Prometheus computes its quantiles
// over any window; the ring of the last 1024 cannot be summed).
struct CommitLatencyHistogram {
  // Upper bounds in seconds: from a commit on an idle host (a few ms) to
  // one held back by a busy disk.
  static constexpr std::array<double, 12> k_bounds_s{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                     0.1,   0.25,   0.5,   1,    2.5,   5};
  std::array<std::uint64_t, k_bounds_s.size() + 1> buckets{};  // per bound, then +Inf; not cumulative
  double sum_s = 0;
  std::uint64_t count = 0;
};

class CommitLatencyRecorder {
 public:
  // One committed batch: `ms` from its oldest line's arrival to the commit.
  void record(double ms);

  [[nodiscard]] CommitLatency recent() const;
  [[nodiscard]] CommitLatencyHistogram histogram() const;

 private:
  mutable std::mutex m_mutex;
  std::array<double, 1024> m_recent_ms{};  // ring buffer
  std::size_t m_count = 0;
  CommitLatencyHistogram m_histogram;
};

}  // namespace trace2d::store
