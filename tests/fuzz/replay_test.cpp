// Replays a fuzzer's committed inputs (tests/fuzz/corpus/<fuzzer>/ and
// tests/fuzz/regressions/<fuzzer>/) through its LLVMFuzzerTestOneInput as an
// ordinary unit test: every input that once crashed stays fixed, and the
// invariants the fuzzers check hold with GCC and under the asan preset too.
// A broken invariant aborts, which fails the test with its message.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace trace2d::test {
namespace {

TEST(FuzzReplay, CommittedInputsKeepEveryInvariant) {
  std::size_t replayed = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    const std::filesystem::path dir = std::filesystem::path(TRACE2D_FUZZ_DIR) / kind / TRACE2D_FUZZER;
    if (!std::filesystem::is_directory(dir)) {
      continue;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().filename().string().front() != '.') {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      SCOPED_TRACE(file.string());
      const std::string bytes = read_file(file);
      EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0);
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0U) << "no committed inputs for " << TRACE2D_FUZZER;
}

}  // namespace
}  // namespace trace2d::test
