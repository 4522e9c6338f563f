#include "tests/support/temp_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace trace2d::test {
namespace {

// Every test process runs under umask 022, whatever its shell's or its CI
// host's: the files the tests write, and those of the gits they run, get
// the modes a user's files usually have (trace2d refuses a trace file every
// user may write, as a umask of 000 would make them).
struct TestUmask {
  TestUmask() { ::umask(022); }
} const k_test_umask;

}  // namespace

TempDir::TempDir() {
  // Short base: AF_UNIX socket paths must fit in 107 bytes.
  std::string pattern = "/tmp/t2d-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  m_path = pattern;
}

TempDir::~TempDir() {
  if (std::getenv("TRACE2D_KEEP_TEST_DIRS") == nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path.string());
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const std::filesystem::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) {
    throw std::runtime_error("cannot write " + path.string());
  }
}

}  // namespace trace2d::test
