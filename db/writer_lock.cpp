#include "db/writer_lock.hpp"

#include <filesystem>
#include <system_error>

namespace trace2d::db {
namespace {

LockFile take(const std::string& db_path) {
  const std::filesystem::path parent = std::filesystem::path(db_path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      throw LockFileError("cannot create directory '" + parent.string() + "': " + ec.message());
    }
  }
  try {
    return LockFile(WriterLock::lock_path(db_path));
  } catch (const LockHeld& held) {
    throw DatabaseInUse("another trace2d (" + held.holder_text() + ") is writing database '" + db_path +
                        "'; one writer per database (lock file '" + WriterLock::lock_path(db_path) + "')");
  }
}

}  // namespace

WriterLock::WriterLock(const std::string& db_path) : m_lock(take(db_path)) {}

}  // namespace trace2d::db
