#include "daemon/source/trace_file_checks.hpp"

#include <fmt/format.h>

namespace trace2d::source {
namespace {

// Below this a file is never called sparse: small files may have no blocks
// of their own (inline data, delayed allocation).
constexpr std::uint64_t k_sparse_min_bytes = 1024 * 1024;
// Filesystems that compress (btrfs, ZFS) report compressed blocks; JSON
// compresses 5 to 20 times, so only far less than that is taken as holes.
constexpr std::uint64_t k_sparse_ratio = 64;

}  // namespace

std::optional<std::string> oversized_or_sparse(const struct stat& st, std::uint64_t max_bytes) {
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;
  if (size >= k_sparse_min_bytes && allocated < size / k_sparse_ratio) {
    return fmt::format("sparse file: {} bytes long, {} bytes allocated", size, allocated);
  }
  if (max_bytes > 0 && size > max_bytes) {
    return fmt::format("file too big: {} bytes (limit {})", size, max_bytes);
  }
  return std::nullopt;
}

}  // namespace trace2d::source
