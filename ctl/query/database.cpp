#include "ctl/query/database.hpp"

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

#include "ctl/query/database_diagnosis.hpp"
#include "ctl/query/query_client.hpp"
#include "ctl/query/restricted_database.hpp"
#include "model/command_identity.hpp"
#include "db/default_paths.hpp"

namespace trace2d::ctl {
namespace {

// The objects every command relies on; their absence means the file is not
// (or not yet) a trace2d database.
constexpr std::array<std::string_view, 5> k_required_objects{
    "schema_version", "sessions", "event_store", "names", "events"};

std::optional<uid_t>& restriction() {
  static std::optional<uid_t> uid;
  return uid;
}

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
    const int error = errno;
    if (error == EACCES || error == EPERM) {
      throw std::runtime_error(access_advice(path, std::strerror(error)));
    }
    throw std::runtime_error("cannot read database '" + path + "': " + std::strerror(error));
  }
  if (auto reason = not_sqlite_reason(path)) {
    throw std::runtime_error(*reason);
  }
}

void check_schema(db::Database& db) {
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
  } catch (const db::SqliteError& e) {
    if (is_query_timeout(e)) {
      throw;
    }
    // Failures to open surface here, on the first read, not at open; the
    // file is SQLite (check_file saw its header), so say what else it is.
    throw std::runtime_error(diagnose_unreadable_database(db.path(), e.what()));
  }
  if (found != static_cast<std::int64_t>(k_required_objects.size())) {
    throw std::runtime_error("'" + db.path() + "' is not a trace2d database: an SQLite database without trace2d's " +
                             "tables (" + list + "); --db must name the database trace2d writes");
  }
}

// SQLite calls the progress handler every this many virtual machine
// instructions: often enough to stop within milliseconds, rarely enough to
// cost nothing measurable.
constexpr int k_progress_instructions = 10000;

using Clock = std::chrono::steady_clock;

// The deadline travels in the handler's argument itself (a tick count, not
// a pointer to one): it then lives exactly as long as the connection's
// handler, whatever happens to the Database object, with nothing to free.
static_assert(sizeof(void*) >= sizeof(Clock::rep));

int past_deadline(void* deadline) {
  const auto ticks = static_cast<Clock::rep>(reinterpret_cast<std::uintptr_t>(deadline));
  return Clock::now().time_since_epoch().count() > ticks ? 1 : 0;
}

}  // namespace

void limit_query_time(db::Database& db, std::chrono::milliseconds timeout) {
  if (timeout <= std::chrono::milliseconds::zero()) {
    return;
  }
  const Clock::rep deadline = (Clock::now() + timeout).time_since_epoch().count();
  sqlite3_progress_handler(db.handle(), k_progress_instructions, past_deadline,
                           reinterpret_cast<void*>(static_cast<std::uintptr_t>(deadline)));
}

bool is_refused_function(const char* name) {
  return name != nullptr &&
         (sqlite3_stricmp(name, "fts3_tokenizer") == 0 || sqlite3_stricmp(name, "load_extension") == 0);
}

void refuse_extensions(db::Database& db) {
  // The two-argument form of fts3_tokenizer() (install a tokenizer) off, as
  // it is by default, and extensions not loadable.
  sqlite3_db_config(db.handle(), SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, nullptr);
  sqlite3_db_config(db.handle(), SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
}

void check_database_file(const std::string& path) { check_file(path); }

namespace {

// Denies fts3_tokenizer() wherever a statement calls it; allows the rest
// (the connection is read-only already).
int authorize(void* /*unused*/, int action, const char* /*arg1*/, const char* function, const char* /*db*/,
              const char* /*trigger*/) {
  if (action == SQLITE_FUNCTION && is_refused_function(function)) {
    return SQLITE_DENY;
  }
  return SQLITE_OK;
}

void refuse_dangerous_functions(db::Database& db) {
  // The one-argument form of fts3_tokenizer() (read an address) is denied
  // at prepare time.
  refuse_extensions(db);
  sqlite3_set_authorizer(db.handle(), authorize, nullptr);
}

}  // namespace

void restrict_databases_to_uid(uid_t uid) { restriction() = uid; }

std::optional<uid_t> database_restriction() { return restriction(); }

db::Database open_database(const std::string& path, std::chrono::milliseconds timeout) {
  if (const std::optional<uid_t> uid = restriction()) {
    return open_restricted_database(path, *uid, timeout);
  }
  check_file(path);
  // Read-only: no command may change the daemon's data, and opening this way
  // never creates a missing file.
  db::Database db(path, db::OpenMode::read_only);
  db.set_busy_timeout(k_busy_timeout_ms);
  refuse_dangerous_functions(db);
  model::register_sql_functions(db);
  limit_query_time(db, timeout);
  check_schema(db);
  return db;
}

bool has_object(db::Database& db, std::string_view name) {
  db::Statement stmt = db.prepare(
      "SELECT count(*) FROM (SELECT name FROM sqlite_master UNION ALL SELECT name FROM temp.sqlite_master)"
      " WHERE name = ?1");
  stmt.bind_text(1, name);
  return stmt.step() && stmt.column_int(0) > 0;
}

bool is_query_timeout(const db::SqliteError& error) { return (error.code() & 0xFF) == SQLITE_INTERRUPT; }

std::string default_database_path() {
  std::string own = db::default_db_path();
  std::error_code ec;
  if (std::filesystem::exists(own, ec)) {
    return own;
  }
  // The system database, also when its directory (0750, group trace2d)
  // hides it: the query service answers for it.
  const bool system_exists = std::filesystem::exists(db::system_db_path(), ec);
  if (system_exists || ec == std::errc::permission_denied) {
    return db::system_db_path();
  }
  return own;
}

}  // namespace trace2d::ctl
