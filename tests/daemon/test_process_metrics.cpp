// The process_* families (daemon/metrics/process_metrics.hpp): read from
// this test's own /proc/self, checked against what the test itself does and
// against getrusage/getrlimit read independently.

#include "daemon/metrics/process_metrics.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace trace2d::metrics {
namespace {

TEST(ProcessMetrics, DescriptorsCountWhatTheProcessOpens) {
  const ProcessFigures before = read_process_figures();
  ASSERT_TRUE(before.open_fds.has_value());
  EXPECT_GE(*before.open_fds, 3);  // stdin, stdout, stderr at least
  std::vector<int> opened;
  for (int i = 0; i < 5; ++i) {
    opened.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_GE(opened.back(), 0);
  }
  const ProcessFigures after = read_process_figures();
  EXPECT_EQ(*after.open_fds, *before.open_fds + 5);
  for (const int fd : opened) {
    ::close(fd);
  }
  struct rlimit limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur == RLIM_INFINITY) {
    EXPECT_FALSE(after.max_fds.has_value());
  } else {
    EXPECT_EQ(after.max_fds, static_cast<double>(limit.rlim_cur));
  }
}

double rusage_cpu_seconds() {
  struct rusage usage {};
  EXPECT_EQ(::getrusage(RUSAGE_SELF, &usage), 0);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

TEST(ProcessMetrics, CpuTimeAgreesWithGetrusageAndGrowsWithWork) {
  const ProcessFigures before = read_process_figures();
  ASSERT_TRUE(before.cpu_seconds.has_value());
  // A third of a second of CPU, however shared the host (/proc counts in
  // clock ticks of 10 ms).
  const double start = rusage_cpu_seconds();
  volatile unsigned long sink = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (rusage_cpu_seconds() - start < 0.35 && std::chrono::steady_clock::now() < give_up) {
    for (int i = 0; i < 100000; ++i) {
      sink = sink + static_cast<unsigned long>(i);
    }
  }
  const ProcessFigures after = read_process_figures();
  const double rusage_s = rusage_cpu_seconds();
  EXPECT_GE(*after.cpu_seconds - *before.cpu_seconds, 0.3);
  EXPECT_NEAR(*after.cpu_seconds, rusage_s, 0.05);
}

TEST(ProcessMetrics, MemoryFiguresFollowTheProcessesOwnStatus) {
  const ProcessFigures figures = read_process_figures();
  ASSERT_TRUE(figures.resident_bytes.has_value());
  ASSERT_TRUE(figures.virtual_bytes.has_value());
  EXPECT_GT(*figures.resident_bytes, 1 << 20);
  EXPECT_GE(*figures.virtual_bytes, *figures.resident_bytes);
  // 64 MiB touched page by page shows in the resident size.
  std::vector<char> block(64 << 20);
  for (std::size_t i = 0; i < block.size(); i += 4096) {
    block[i] = static_cast<char>(i >> 12);
  }
  const ProcessFigures grown = read_process_figures();
  volatile char kept = block[block.size() - 4096];  // the pages stay in use until here
  (void)kept;
  EXPECT_GE(*grown.resident_bytes - *figures.resident_bytes, 60 << 20);
}

TEST(ProcessMetrics, WrittenUnderClientGolangsNames) {
  Exposition out(Format::text);
  ProcessFigures figures;
  figures.cpu_seconds = 1.5;
  figures.resident_bytes = 4096;
  figures.open_fds = 12;  // virtual size and the limit unknown: left out
  write_process_metrics(out, figures, 1795000000);
  const std::string text = std::move(out).finish();
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.5\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\nprocess_resident_memory_bytes 4096\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nprocess_open_fds 12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nprocess_start_time_seconds 1795000000\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("process_virtual_memory_bytes"), std::string::npos) << text;
  EXPECT_EQ(text.find("process_max_fds"), std::string::npos) << text;
}

}  // namespace
}  // namespace trace2d::metrics
