#include "db/sqlite.hpp"

#include <utility>

namespace trace2d::db {

bool SqliteError::is_busy() const {
  const int primary = m_code & 0xFF;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

namespace {

// Memory statistics cost a global mutex on every SQLite allocation; the
// daemon does not use them. Must run before SQLite initialises itself.
void configure_sqlite_once() {
  static const int configured = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return 0;
  }();
  (void)configured;
}

}  // namespace

Database::Database(const std::string& path, OpenMode mode) : m_path(path) {
  configure_sqlite_once();
  const int flags = mode == OpenMode::read_only
                        ? SQLITE_OPEN_READONLY
                        : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path.c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = "cannot open database '" + path + "': ";
    message += m_db != nullptr ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    sqlite3_close(m_db);
    m_db = nullptr;
    throw SqliteError(rc, message);
  }
  sqlite3_extended_result_codes(m_db, 1);
}

Database::~Database() {
  if (m_db != nullptr) {
    sqlite3_close_v2(m_db);
  }
}

Database::Database(Database&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)), m_path(std::move(other.m_path)), m_kept(std::move(other.m_kept)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (m_db != nullptr) {
      sqlite3_close_v2(m_db);
    }
    m_db = std::exchange(other.m_db, nullptr);
    m_path = std::move(other.m_path);
    m_kept = std::move(other.m_kept);
  }
  return *this;
}

void Database::fail(int code, std::string_view context) const {
  std::string message(context);
  message += ": ";
  message += m_db != nullptr ? sqlite3_errmsg(m_db) : sqlite3_errstr(code);
  throw SqliteError(code, message);
}

void Database::exec(std::string_view sql) {
  const std::string text(sql);
  char* error = nullptr;
  const int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    throw SqliteError(rc, "SQL failed (" + message + "): " + text.substr(0, 200));
  }
}

Statement Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(m_db, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    fail(rc, "cannot prepare '" + std::string(sql.substr(0, 200)) + "'");
  }
  return Statement(stmt, this);
}

std::optional<std::int64_t> Database::query_int(std::string_view sql) {
  Statement stmt = prepare(sql);
  if (!stmt.step()) {
    return std::nullopt;
  }
  return stmt.column_optional_int(0);
}

std::optional<std::string> Database::query_text(std::string_view sql) {
  Statement stmt = prepare(sql);
  if (!stmt.step()) {
    return std::nullopt;
  }
  return stmt.column_optional_text(0);
}

void Database::set_busy_timeout(int milliseconds) { sqlite3_busy_timeout(m_db, milliseconds); }

std::int64_t Database::changes() const { return sqlite3_changes64(m_db); }

Statement::~Statement() {
  if (m_stmt != nullptr) {
    sqlite3_finalize(m_stmt);
  }
}

Statement::Statement(Statement&& other) noexcept
    : m_stmt(std::exchange(other.m_stmt, nullptr)), m_db(other.m_db) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (m_stmt != nullptr) {
      sqlite3_finalize(m_stmt);
    }
    m_stmt = std::exchange(other.m_stmt, nullptr);
    m_db = other.m_db;
  }
  return *this;
}

void Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK) {
    m_db->fail(rc, "cannot bind parameter " + std::to_string(index));
  }
}

void Statement::bind_null(int index) { check_bind(sqlite3_bind_null(m_stmt, index), index); }
void Statement::bind_int(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(m_stmt, index, value), index);
}
void Statement::bind_double(int index, double value) {
  check_bind(sqlite3_bind_double(m_stmt, index, value), index);
}
void Statement::bind_text(int index, std::string_view value) {
  check_bind(sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                 SQLITE_UTF8),
             index);
}
void Statement::bind_text_static(int index, std::string_view value) {
  check_bind(sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8),
             index);
}
void Statement::bind_blob_static(int index, std::string_view value) {
  check_bind(sqlite3_bind_blob64(m_stmt, index, value.data(), value.size(), SQLITE_STATIC), index);
}
void Statement::bind_blob(int index, std::string_view value) {
  check_bind(sqlite3_bind_blob64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT),
             index);
}
void Statement::bind(int index, const std::optional<std::int64_t>& value) {
  value ? bind_int(index, *value) : bind_null(index);
}
void Statement::bind(int index, const std::optional<double>& value) {
  value ? bind_double(index, *value) : bind_null(index);
}
void Statement::bind(int index, const std::optional<std::string>& value) {
  value ? bind_text(index, *value) : bind_null(index);
}
void Statement::bind_text_or_null(int index, std::string_view value) {
  value.empty() ? bind_null(index) : bind_text(index, value);
}

bool Statement::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  sqlite3_reset(m_stmt);
  m_db->fail(rc, "statement failed");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::run_rebinding_all() {
  while (step()) {
  }
  sqlite3_reset(m_stmt);
}

void Statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

int Statement::column_count() const { return sqlite3_column_count(m_stmt); }
int Statement::column_type(int index) const { return sqlite3_column_type(m_stmt, index); }
std::string_view Statement::column_name(int index) const {
  const char* name = sqlite3_column_name(m_stmt, index);
  return name != nullptr ? name : "";
}
bool Statement::column_is_null(int index) const { return column_type(index) == SQLITE_NULL; }
std::int64_t Statement::column_int(int index) const { return sqlite3_column_int64(m_stmt, index); }
double Statement::column_double(int index) const { return sqlite3_column_double(m_stmt, index); }
// Through the column's value: sqlite3_column_text() and _bytes() each
// looked the column up again, under the connection's (absent) mutex, as
// sqlite3_column_type() and _int64() do; a connection is used by one
// thread at a time (SQLITE_OPEN_NOMUTEX), so its values may be read so.
std::string_view Statement::column_text(int index) const {
  sqlite3_value* value = sqlite3_column_value(m_stmt, index);
  const auto* text = sqlite3_value_text(value);
  const int size = sqlite3_value_bytes(value);
  return text != nullptr ? std::string_view(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size))
                         : std::string_view();
}
std::string_view Statement::column_blob(int index) const {
  const void* blob = sqlite3_column_blob(m_stmt, index);
  const int size = sqlite3_column_bytes(m_stmt, index);
  return blob != nullptr ? std::string_view(static_cast<const char*>(blob), static_cast<std::size_t>(size))
                         : std::string_view();
}
std::optional<std::int64_t> Statement::column_optional_int(int index) const {
  sqlite3_value* value = sqlite3_column_value(m_stmt, index);
  return sqlite3_value_type(value) == SQLITE_NULL ? std::nullopt
                                                  : std::optional<std::int64_t>(sqlite3_value_int64(value));
}
std::optional<double> Statement::column_optional_double(int index) const {
  sqlite3_value* value = sqlite3_column_value(m_stmt, index);
  return sqlite3_value_type(value) == SQLITE_NULL ? std::nullopt : std::optional<double>(sqlite3_value_double(value));
}
std::optional<std::string> Statement::column_optional_text(int index) const {
  sqlite3_value* value = sqlite3_column_value(m_stmt, index);
  if (sqlite3_value_type(value) == SQLITE_NULL) {
    return std::nullopt;
  }
  const auto* text = sqlite3_value_text(value);
  return text != nullptr
             ? std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_value_bytes(value)))
             : std::string();
}
bool Statement::is_read_only() const { return sqlite3_stmt_readonly(m_stmt) != 0; }

bool Statement::is_explain() const { return sqlite3_stmt_isexplain(m_stmt) != 0; }

Transaction::Transaction(Database& db) : m_db(db) { m_db.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (m_open) {
    sqlite3_exec(m_db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  m_db.exec("COMMIT");
  m_open = false;
}

}  // namespace trace2d::db
