#pragma once
// Minimal RAII over the SQLite C API: a connection, a prepared statement, and
// an exception that carries the failing call's context.

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace trace2d::db {

class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& what) : std::runtime_error(what), m_code(code) {}
  [[nodiscard]] int code() const { return m_code; }
  // SQLITE_BUSY / SQLITE_LOCKED: another connection holds a lock; try later.
  [[nodiscard]] bool is_busy() const;

 private:
  int m_code;
};

enum class OpenMode { read_write_create, read_only };

class Statement;

class Database {
 public:
  Database(const std::string& path, OpenMode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;

  // Runs one or more statements that return no rows.
  void exec(std::string_view sql);
  [[nodiscard]] Statement prepare(std::string_view sql);
  // The first column of the first row of a query, or nullopt when no row.
  [[nodiscard]] std::optional<std::int64_t> query_int(std::string_view sql);
  [[nodiscard]] std::optional<std::string> query_text(std::string_view sql);

  void set_busy_timeout(int milliseconds);
  [[nodiscard]] sqlite3* handle() const { return m_db; }
  [[nodiscard]] const std::string& path() const { return m_path; }
  [[nodiscard]] std::int64_t changes() const;

  [[noreturn]] void fail(int code, std::string_view context) const;

  // State a callback installed on the connection (an authorizer's rules)
  // points to: kept exactly as long as the connection, across moves.
  void keep_with_connection(std::shared_ptr<void> state) { m_kept = std::move(state); }
  [[nodiscard]] void* kept_state() const { return m_kept.get(); }

 private:
  sqlite3* m_db = nullptr;
  std::string m_path;
  // Destroyed after the destructor closed the connection (members after
  // the body): no callback can see it freed.
  std::shared_ptr<void> m_kept;
};

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3_stmt* stmt, const Database* db) : m_stmt(stmt), m_db(db) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;

  // Parameters are 1-based, as in SQLite. Text and blobs are copied
  // (SQLITE_TRANSIENT), so the caller's buffers may change afterwards.
  void bind_null(int index);
  void bind_int(int index, std::int64_t value);
  void bind_double(int index, double value);
  void bind_text(int index, std::string_view value);
  void bind_blob(int index, std::string_view value);
  // Not copied: `value` must stay unchanged until the statement is reset.
  void bind_text_static(int index, std::string_view value);
  void bind_blob_static(int index, std::string_view value);
  void bind(int index, const std::optional<std::int64_t>& value);
  void bind(int index, const std::optional<double>& value);
  void bind(int index, const std::optional<std::string>& value);
  void bind_text_or_null(int index, std::string_view value);  // empty -> NULL

  // Advances; true while a row is available.
  bool step();
  // Runs a statement that returns no rows, then resets it for reuse.
  void run();
  // As run(), but leaves the parameters bound: for statements that bind
  // every parameter before each run, where clearing them (one call per
  // parameter, hundreds in a multi-row INSERT) is wasted work. A text bound
  // without a copy stays pointed to until it is bound over.
  void run_rebinding_all();
  void reset();

  [[nodiscard]] int column_count() const;
  [[nodiscard]] int column_type(int index) const;  // SQLITE_INTEGER, ...
  [[nodiscard]] std::string_view column_name(int index) const;
  [[nodiscard]] bool column_is_null(int index) const;
  [[nodiscard]] std::int64_t column_int(int index) const;
  [[nodiscard]] double column_double(int index) const;
  [[nodiscard]] std::string_view column_text(int index) const;
  [[nodiscard]] std::string_view column_blob(int index) const;
  [[nodiscard]] std::optional<std::int64_t> column_optional_int(int index) const;
  [[nodiscard]] std::optional<double> column_optional_double(int index) const;
  [[nodiscard]] std::optional<std::string> column_optional_text(int index) const;

  [[nodiscard]] bool is_read_only() const;
  [[nodiscard]] bool is_explain() const;  // EXPLAIN or EXPLAIN QUERY PLAN
  [[nodiscard]] explicit operator bool() const { return m_stmt != nullptr; }

 private:
  void check_bind(int rc, int index);
  sqlite3_stmt* m_stmt = nullptr;
  const Database* m_db = nullptr;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& m_db;
  bool m_open = true;
};

}  // namespace trace2d::db
