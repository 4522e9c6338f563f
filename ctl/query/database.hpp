#pragma once
// Opens trace2d's database the way every trace2ctl command must: read-only,
// never creating the file, tolerant of a live daemon writing to it, and
// checked for trace2d's schema so a wrong --db fails with a clear message
// rather than "no such table" halfway through a command.

#include <string>

#include "daemon/store/sqlite.hpp"

namespace trace2d::ctl {

// How long a query waits on a lock the daemon holds (WAL recovery, a
// checkpoint) before giving up. Readers rarely wait at all in WAL mode.
inline constexpr int k_busy_timeout_ms = 5000;

// Throws std::runtime_error (or store::SqliteError) naming `path` when the
// file is missing, unreadable, not SQLite, or lacks trace2d's tables.
[[nodiscard]] store::Database open_database(const std::string& path);

// The database trace2ctl reads when --db is not given: the one a trace2d run
// by this user writes, or else the system service's (readable by members of
// the trace2d group).
[[nodiscard]] std::string default_database_path();

}  // namespace trace2d::ctl
