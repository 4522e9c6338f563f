#include "daemon/source/trace_file_checks.hpp"

#include <gtest/gtest.h>

namespace trace2d::source {
namespace {

constexpr std::uint64_t k_mib = 1024 * 1024;

struct stat file_of(std::uint64_t size, std::uint64_t allocated) {
  struct stat st {};
  st.st_size = static_cast<off_t>(size);
  st.st_blocks = static_cast<blkcnt_t>(allocated / 512);
  return st;
}

TEST(TraceFileChecks, AnOrdinaryFileMayBeRead) {
  EXPECT_EQ(oversized_or_sparse(file_of(300 * 1024, 304 * 1024), 1024 * k_mib), std::nullopt);
}

TEST(TraceFileChecks, ATerabyteOfHolesIsSparse) {
  EXPECT_EQ(oversized_or_sparse(file_of(1ULL << 40, 0), 0),
            "sparse file: 1099511627776 bytes long, 0 bytes allocated");
}

TEST(TraceFileChecks, SmallFilesWithoutBlocksAreNotSparse) {
  // Inline data and delayed allocation: a fresh small file may own no block.
  EXPECT_EQ(oversized_or_sparse(file_of(k_mib - 1, 0), 0), std::nullopt);
}

TEST(TraceFileChecks, ACompressedFileIsNotSparse) {
  // btrfs or ZFS report compressed blocks: JSON at 20 times is still read.
  EXPECT_EQ(oversized_or_sparse(file_of(100 * k_mib, 5 * k_mib), 0), std::nullopt);
  EXPECT_NE(oversized_or_sparse(file_of(100 * k_mib, k_mib), 0), std::nullopt);
}

TEST(TraceFileChecks, TheSizeCapCountsAndZeroMeansNone) {
  EXPECT_EQ(oversized_or_sparse(file_of(2 * k_mib + 1, 2 * k_mib + 4096), 2 * k_mib),
            "file too big: 2097153 bytes (limit 2097152)");
  EXPECT_EQ(oversized_or_sparse(file_of(2 * k_mib, 2 * k_mib), 2 * k_mib), std::nullopt);
  EXPECT_EQ(oversized_or_sparse(file_of(64ULL << 30, 64ULL << 30), 0), std::nullopt);
}

}  // namespace
}  // namespace trace2d::source
