#pragma once
// Why a database file cannot be read, in the user's terms. SQLite reports
// most failures to open as "unable to open database file", at the first
// read, whatever the cause: a file that is not SQLite at all, a write-ahead
// log index (-shm) the user may not read, a -shm that a read-only reader
// cannot create. These checks look at the files themselves to say which.

#include <optional>
#include <string>

namespace trace2d::ctl {

// A message for a file that does not start with SQLite's 16-byte header
// ("SQLite format 3\0"), or nullopt when it does (or is empty, which SQLite
// treats as an empty database). Throws nothing: an unreadable file yields
// nullopt, for the caller's own access check to report.
[[nodiscard]] std::optional<std::string> not_sqlite_reason(const std::string& path);

// The best explanation for SQLite's `sqlite_message` on opening or first
// reading `path` (an SQLite file): an unreadable or missing -wal/-shm
// beside it, or else SQLite's message with the path.
[[nodiscard]] std::string diagnose_unreadable_database(const std::string& path, const std::string& sqlite_message);

}  // namespace trace2d::ctl
