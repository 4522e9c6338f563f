#include "db/file_offsets.hpp"

#include "db/sqlite.hpp"

namespace trace2d::db {

std::map<std::string, SavedFileOffset> read_file_offsets(const std::string& db_path, std::string_view key_prefix) {
  std::map<std::string, SavedFileOffset> saved;
  Database db(db_path, OpenMode::read_only);
  db.set_busy_timeout(5000);
  // substr() rather than LIKE: a prefix is compared as bytes, '_' and '%' included.
  Statement rows = db.prepare("SELECT key, offset, finished FROM file_offsets WHERE substr(key, 1, ?1) = ?2");
  rows.bind_int(1, static_cast<std::int64_t>(key_prefix.size()));
  rows.bind_text(2, key_prefix);
  while (rows.step()) {
    saved[std::string(rows.column_text(0))] = {static_cast<std::uint64_t>(rows.column_int(1)), rows.column_int(2) != 0};
  }
  return saved;
}

}  // namespace trace2d::db
