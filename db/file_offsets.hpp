#pragma once
// Read access to `file_offsets`: how far earlier runs read each trace file,
// so that the directory watcher and `trace2d import` resume where the last
// commit left them. (The store writes the rows, in the transaction that
// holds the lines read up to there.)

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace trace2d::db {

struct SavedFileOffset {
  std::uint64_t offset = 0;
  bool finished = false;
};

// Every row whose key starts with `key_prefix` ("dir:", "import:"), by key.
// Throws SqliteError when the database cannot be read.
[[nodiscard]] std::map<std::string, SavedFileOffset> read_file_offsets(const std::string& db_path,
                                                                      std::string_view key_prefix);

}  // namespace trace2d::db
