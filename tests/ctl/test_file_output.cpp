// write_text_file (`export -o`, `report --html`): replaced in one step, and
// its predictable temporary name (`<path>.tmp-<pid>`) never written through.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>

#include "ctl/output/file_output.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::ctl {
namespace {

std::string temp_name(const std::string& path) { return path + ".tmp-" + std::to_string(::getpid()); }

TEST(FileOutput, ReplacesTheFileAndLeavesNoTemporary) {
  test::TempDir dir;
  const std::string path = dir.file("report.html");
  test::write_file(path, "old");
  write_text_file(path, "new page");
  EXPECT_EQ(test::read_file(path), "new page");
  EXPECT_FALSE(std::filesystem::exists(temp_name(path)));
}

// Issue 10: another user links the temporary name to a file of ours in a
// shared directory; the old O_TRUNC open would have emptied and rewritten it.
TEST(FileOutput, NeverWritesThroughASymlinkAtTheTemporaryName) {
  test::TempDir dir;
  const std::string path = dir.file("report.html");
  const std::string victim = dir.file("victim.txt");
  test::write_file(victim, "precious\n");
  std::filesystem::create_symlink(victim, temp_name(path));
  try {
    write_text_file(path, "page");
    FAIL() << "wrote through the symlink";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::read_file(victim), "precious\n");
  EXPECT_FALSE(std::filesystem::exists(path));
  // Not ours to remove either.
  EXPECT_TRUE(std::filesystem::is_symlink(temp_name(path)));
}

TEST(FileOutput, NeverWritesIntoAFileAlreadyAtTheTemporaryName) {
  test::TempDir dir;
  const std::string path = dir.file("trace.json");
  test::write_file(temp_name(path), "someone else's");
  EXPECT_THROW(write_text_file(path, "trace"), std::runtime_error);
  EXPECT_EQ(test::read_file(temp_name(path)), "someone else's");
  EXPECT_FALSE(std::filesystem::exists(path));
}

// `-o /dev/null` (as root, a rename would have put a regular file in
// /dev/null's place) and a FIFO: written into, not replaced.
TEST(FileOutput, WritesIntoADeviceOrAFifoInsteadOfReplacingIt) {
  write_text_file("/dev/null", "discarded");
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  EXPECT_FALSE(std::filesystem::exists(temp_name("/dev/null")));

  test::TempDir dir;
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo);
    received.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  write_text_file(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_THROW(write_text_file(dir.path().string(), "x"), std::runtime_error);  // a directory
}

}  // namespace
}  // namespace trace2d::ctl
