#include "tests/ctl/imported_traces.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {
namespace {

struct ImportedDatabase {
  TempDir dir;
  std::string path = dir.file("traces.db");

  ImportedDatabase() {
    ProcessSpec spec;
    // traces/ and the one real exec (kept apart: the benchmarks replay
    // traces/, and an exec'ing process never completes).
    spec.argv = {TRACE2D_BIN, "--config", "", "import", "--db", path,
                 (std::filesystem::path(TRACE2D_TEST_DATA) / "traces").string(),
                 (std::filesystem::path(TRACE2D_TEST_DATA) / "exec").string()};
    const ProcessResult result = run_process(spec);
    if (result.exit_code != 0) {
      throw std::runtime_error("trace2d import failed: " + result.err);
    }
  }
};

}  // namespace

const std::string& imported_traces_db() {
  static const auto db = std::make_unique<ImportedDatabase>();
  return db->path;
}

void expect_golden(const std::string& actual, const std::string& name) {
  const std::filesystem::path file = std::filesystem::path(TRACE2CTL_GOLDEN_DIR) / name;
  if (const char* update = std::getenv("TRACE2D_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    write_file(file, actual);
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(file)) << file << " is missing; run with TRACE2D_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(actual, read_file(file)) << "differs from " << file
                                     << " (TRACE2D_UPDATE_GOLDEN=1 rewrites it; review the diff)";
}

}  // namespace trace2d::test
