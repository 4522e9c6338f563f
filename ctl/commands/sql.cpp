// trace2ctl sql [STATEMENT|-]: one read-only SQL statement against the
// database, given or read from standard input.

#include <unistd.h>

#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "ctl/commands/command.hpp"
#include "ctl/output/print_result.hpp"
#include "ctl/output/table.hpp"
#include "ctl/query/database.hpp"
#include "ctl/query/restricted_database.hpp"

namespace trace2d::ctl {
namespace {

struct SqlOptions {
  std::string statement;
};

// Longer than any statement a person writes; keeps a stray `cat bigfile |`
// from being read whole.
constexpr std::size_t k_max_statement_bytes = 1 << 20;

// The statement: the argument, or standard input when it is "-" or absent
// (as sqlite3 reads SQL), but not from a terminal nobody is typing into.
std::string statement_text(const SqlOptions& options) {
  if (!options.statement.empty() && options.statement != "-") {
    return options.statement;
  }
  if (options.statement.empty() && ::isatty(STDIN_FILENO) == 1) {
    throw UsageError("give a SQL statement, as an argument or on standard input (`echo 'SELECT ...' | trace2ctl "
                     "sql`, or `trace2ctl sql - < query.sql`)");
  }
  std::string text;
  char buffer[4096];
  while (std::cin.read(buffer, sizeof buffer) || std::cin.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(std::cin.gcount()));
    if (text.size() > k_max_statement_bytes) {
      throw CommandError("the statement on standard input is longer than " + std::to_string(k_max_statement_bytes) +
                         " bytes");
    }
  }
  if (std::cin.bad()) {
    throw CommandError("cannot read the statement from standard input");
  }
  return text;
}

bool only_whitespace_or_comments(db::Database& db, const char* text) {
  // SQLite compiles trailing comments and blanks to no statement at all.
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db.handle(), text, -1, &raw, nullptr);
  sqlite3_finalize(raw);
  return rc == SQLITE_OK && raw == nullptr;
}

// Database::prepare() ignores what follows the first statement; here that
// text matters, since "SELECT 1; DELETE ..." must not half-run.
db::Statement prepare_single(db::Database& db, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()) + 1,
                                    &raw, &tail);
  db::Statement stmt(raw, &db);  // owns `raw` from here on, even when we throw
  if (rc != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(db.handle());
    if ((rc & 0xFF) == SQLITE_INTERRUPT) {
      throw db::SqliteError(rc, message);  // the time limit: main says so
    }
    if (is_restricted(db) && (message == "not authorized" || message.find("is prohibited") != std::string::npos)) {
      throw CommandError("SQL error: " + message +
                         " (the query service shows only your own sessions: the tables and views of "
                         "docs/schema.md, filtered to your uid; no ATTACH, PRAGMA, `names` but through the "
                         "views, nor the schema's SQL)");
    }
    if (message.rfind("not authorized to use function", 0) == 0) {
      throw CommandError("SQL error: " + message +
                         " (trace2ctl refuses it: fts3_tokenizer() reveals memory addresses)");
    }
    throw CommandError("SQL error: " + message);
  }
  if (!stmt) {
    throw CommandError("no SQL statement given");
  }
  if (tail != nullptr && !only_whitespace_or_comments(db, tail)) {
    throw CommandError("only one SQL statement may be given; found more after the first");
  }
  if (is_restricted(db) && stmt.is_explain()) {
    // EXPLAIN would name the attached file's schema, which the restriction
    // keeps from the user's statements.
    throw CommandError("EXPLAIN is not available through the query service");
  }
  if (!stmt.is_read_only()) {
    throw CommandError("refusing to run a statement that would write: trace2ctl opens the "
                       "database read-only");
  }
  return stmt;
}

void run_sql(const Context& ctx, const SqlOptions& options) {
  db::Database db = open_database(ctx.global.db_path, ctx.global.query_timeout);
  // On a connection restricted to one user, this statement is the user's:
  // the authorizer holds it to the user's rows (restricted_database.hpp),
  // also when SQLite prepares it again while it runs.
  const UserSqlScope user_sql(db);
  db::Statement stmt = prepare_single(db, statement_text(options));
  ResultSet result;
  try {
    result = read_all(stmt);
  } catch (const db::SqliteError& e) {
    if (is_query_timeout(e)) {
      throw;
    }
    throw CommandError(std::string("SQL error: ") + e.what());
  }
  // JSON prints "[]" for statements without columns; the others nothing.
  if (ctx.global.format == OutputFormat::json || !result.columns.empty()) {
    // Values as stored, as sqlite3 shows them: times in UTC.
    TableStyle style;
    style.display_times = false;
    print_result(ctx.out, result, ctx.global.format, style);
  }
}

}  // namespace

Command add_sql_command(CLI::App& cli) {
  auto options = std::make_shared<SqlOptions>();
  CLI::App* app = cli.add_subcommand(
      "sql",
      "Run one read-only SQL statement and print its rows (try the table `sessions` and the "
      "views `events` and `problems`)");
  app->add_option("statement", options->statement,
                  "The SQL statement, e.g. \"SELECT ...\"; '-' or none: read it from standard input");
  return {app, [options](const Context& ctx) { run_sql(ctx, *options); }, [] { return true; }};
}

}  // namespace trace2d::ctl
