#pragma once
// The example program against a real trace2d: a fixture with three source
// repositories, and helpers to run the example and read what was stored.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {

struct ExampleRun {
  ProcessResult result;
  std::string sid;
};

class ExampleFixture : public ::testing::Test {
 protected:
  void SetUp() override;

  // parallel-fetch --jobs 2 --print-sid [extra] <dir>/<dest> <sources>, with
  // GIT_TRACE2_EVENT=target (unset when empty) and no other trace variable.
  ExampleRun run_example(const std::string& dest, const std::string& target,
                         const std::vector<std::string>& extra = {});
  // The number of events the example writes for itself with a file target.
  long events_written_to_a_file(const std::string& dest,
                                const std::vector<std::string>& extra = {});

  TempDir m_dir;
  std::vector<std::string> m_sources;
};

// The pid at the end of a SID component ("-P%08x").
[[nodiscard]] long pid_in_sid(const std::string& sid);
// A single-integer query with ?1 bound to `sid`.
[[nodiscard]] long count(db::Database& db, const std::string& sql, const std::string& sid);
// Where a line of a drawn tree starts (after any columns of numbers).
[[nodiscard]] std::size_t indentation(const std::string& line);
// The first line at or after `from` that holds every needle.
[[nodiscard]] std::optional<std::size_t> find_line(const std::vector<std::string>& lines,
                                                   std::size_t from,
                                                   const std::vector<std::string>& needles);
[[nodiscard]] std::vector<std::string> split_lines(const std::string& text);

}  // namespace trace2d::test
