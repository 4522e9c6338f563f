#pragma once
// A fresh directory per test, removed afterwards (kept when
// TRACE2D_KEEP_TEST_DIRS is set, for post-mortems).

#include <filesystem>
#include <string>

namespace trace2d::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }
  [[nodiscard]] std::string file(const std::string& name) const { return (m_path / name).string(); }

 private:
  std::filesystem::path m_path;
};

// Reads a whole file; throws on failure.
[[nodiscard]] std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, std::string_view content);

}  // namespace trace2d::test
