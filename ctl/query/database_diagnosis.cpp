#include "ctl/query/database_diagnosis.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

namespace trace2d::ctl {
namespace {

constexpr std::string_view k_sqlite_header{"SQLite format 3\0", 16};

std::string parent_dir(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? std::string(".") : parent;
}

}  // namespace

std::optional<std::string> not_sqlite_reason(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::array<char, k_sqlite_header.size()> head{};
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  const auto got = static_cast<std::size_t>(in.gcount());
  if (got == 0) {
    return std::nullopt;  // empty: SQLite's empty database; the schema check reports it
  }
  if (got == head.size() && std::string_view(head.data(), head.size()) == k_sqlite_header) {
    return std::nullopt;
  }
  return "'" + path + "' is not an SQLite database (it does not start with SQLite's file header); --db must name "
         "the database trace2d writes";
}

std::string diagnose_unreadable_database(const std::string& path, const std::string& sqlite_message) {
  // trace2d keeps its database in WAL mode: a reader needs the -wal and
  // -shm files beside it too, and read access to them.
  for (const char* suffix : {"-shm", "-wal"}) {
    const std::string side = path + suffix;
    std::error_code ec;
    if (std::filesystem::exists(side, ec) && ::access(side.c_str(), R_OK) != 0) {
      const int error = errno;
      return "cannot read '" + side + "' (" + std::strerror(error) + "): the database is in WAL mode, and reading it " +
             "needs read access to its -wal and -shm files as well; join the group trace2d's files grant it to "
             "(`sudo usermod -aG trace2d $USER`, then log in again), run trace2ctl with sudo, or read a copy";
    }
  }
  std::error_code ec;
  const bool has_wal = std::filesystem::exists(path + "-wal", ec);
  const bool has_shm = std::filesystem::exists(path + "-shm", ec);
  const std::string dir = parent_dir(path);
  if (has_wal && !has_shm && ::access(dir.c_str(), W_OK) != 0) {
    return "cannot read database '" + path + "': its write-ahead log has no -shm index beside it, and a reader " +
           "may not create one in '" + dir + "'; it appears while trace2d runs on the database";
  }
  return "cannot read database '" + path + "': " + sqlite_message;
}

}  // namespace trace2d::ctl
