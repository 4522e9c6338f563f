#include "ctl/query/database.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "daemon/app/options.hpp"

namespace trace2d::ctl {
namespace {

// The objects every command relies on; their absence means the file is not
// (or not yet) a trace2d database.
constexpr std::array<std::string_view, 5> k_required_objects{
    "schema_version", "sessions", "event_store", "names", "events"};

void check_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    // SQLite would report only "unable to open database file"; say what to do.
    throw std::runtime_error("database '" + path +
                             "' not found (is trace2d running with this --db?)");
  }
  if (ec) {
    throw std::runtime_error("cannot access database '" + path + "': " + ec.message());
  }
  if (std::filesystem::is_directory(status)) {
    throw std::runtime_error("database '" + path + "' is a directory, not a file");
  }
  if (::access(path.c_str(), R_OK) != 0) {
    throw std::runtime_error("cannot read database '" + path + "': " + std::strerror(errno));
  }
}

void check_schema(store::Database& db) {
  std::string list;
  for (const std::string_view name : k_required_objects) {
    list += list.empty() ? "'" : ", '";
    list += name;
    list += "'";
  }
  std::int64_t found = 0;
  try {
    found = db.query_int("SELECT count(*) FROM sqlite_master WHERE name IN (" + list + ")")
                .value_or(0);
  } catch (const store::SqliteError& e) {
    // SQLITE_NOTADB and friends surface here, on the first read, not at open.
    throw std::runtime_error("'" + db.path() + "' is not a trace2d database: " + e.what());
  }
  if (found != static_cast<std::int64_t>(k_required_objects.size())) {
    throw std::runtime_error("'" + db.path() +
                             "' is not a trace2d database (it lacks trace2d's tables)");
  }
}

}  // namespace

store::Database open_database(const std::string& path) {
  check_file(path);
  // Read-only: no command may change the daemon's data, and opening this way
  // never creates a missing file.
  store::Database db(path, store::OpenMode::read_only);
  db.set_busy_timeout(k_busy_timeout_ms);
  check_schema(db);
  return db;
}

std::string default_database_path() {
  const std::string own = app::default_db_path();
  std::error_code ec;
  if (!std::filesystem::exists(own, ec) && std::filesystem::exists(app::system_db_path(), ec)) {
    return app::system_db_path();
  }
  return own;
}

}  // namespace trace2d::ctl
