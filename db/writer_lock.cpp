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
  // The lock is the file's, not the name's: through a symlink to the
  // database (or to a directory above it) a second writer took a lock of
  // its own, and each then lost the other's sessions.
  // A symlink to a database not created yet is followed too (weakly_canonical
  // stops at a missing target); 40 links at most, as the kernel's limit.
  std::error_code ec;
  std::filesystem::path target = db_path;
  for (int links = 0; links < 40 && std::filesystem::is_symlink(target, ec); ++links) {
    const std::filesystem::path next = std::filesystem::read_symlink(target, ec);
    if (ec) {
      break;
    }
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  std::string real = std::filesystem::weakly_canonical(target, ec).string();
  if (ec || real.empty()) {
    real = db_path;
  }
  try {
    return LockFile(WriterLock::lock_path(real));
  } catch (const LockHeld& held) {
    throw DatabaseInUse("another trace2d (" + held.holder_text() + ") is writing database '" + db_path +
                        "'; one writer per database (lock file '" + WriterLock::lock_path(real) + "')");
  }
}

}  // namespace

WriterLock::WriterLock(const std::string& db_path) : m_lock(take(db_path)) {}

}  // namespace trace2d::db
