#pragma once
// Opens trace2d's database the way every trace2ctl command must: read-only,
// never creating the file, tolerant of a live daemon writing to it, and
// checked for trace2d's schema so a wrong --db fails with a clear message
// rather than "no such table" halfway through a command.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "db/sqlite.hpp"

namespace trace2d::ctl {

// How long a query waits on a lock the daemon holds (WAL recovery, a
// checkpoint) before giving up. Readers rarely wait at all in WAL mode.
inline constexpr int k_busy_timeout_ms = 5000;

// How long a command's queries may run, all together, by default
// (`--timeout`). A read transaction held open keeps trace2d from
// checkpointing its WAL, which then grows past journal_size_limit: one long
// recursive query grew it to 395 MB.
inline constexpr std::chrono::milliseconds k_default_query_timeout = std::chrono::seconds(30);

// Throws std::runtime_error (or db::SqliteError) naming `path` when the
// file is missing, unreadable, not SQLite, or lacks trace2d's tables.
//
// Every query on the connection must finish within `timeout` of the open
// (zero: no limit); past it, SQLite stops the statement and it throws a
// db::SqliteError that is_query_timeout() recognises. The connection
// also refuses fts3_tokenizer(), which returns the address of a tokenizer
// (a heap pointer) and can install one: nothing trace2ctl needs, everything
// an attacker would.
[[nodiscard]] db::Database open_database(const std::string& path,
                                            std::chrono::milliseconds timeout = k_default_query_timeout);

// Restricts every later open_database() of this process to one user's
// sessions (open_restricted_database()): trace2ctl run by the query service
// for that user. Process-wide on purpose, so that no command, present or
// future, can open the database another way.
void restrict_databases_to_uid(uid_t uid);
[[nodiscard]] std::optional<uid_t> database_restriction();

// The checks open_database() makes, for open_restricted_database().
void check_database_file(const std::string& path);
void limit_query_time(db::Database& db, std::chrono::milliseconds timeout);
[[nodiscard]] bool is_refused_function(const char* name);
void refuse_extensions(db::Database& db);

// Whether the database has a table or view of this name (also through a
// restricted connection, whose objects are in its TEMP schema).
[[nodiscard]] bool has_object(db::Database& db, std::string_view name);

// True for the error a statement stopped by the time limit throws.
[[nodiscard]] bool is_query_timeout(const db::SqliteError& error);

// The database trace2ctl reads when --db is not given: the one a trace2d run
// by this user writes, or else the system service's (readable by members of
// the trace2d group).
[[nodiscard]] std::string default_database_path();

}  // namespace trace2d::ctl
