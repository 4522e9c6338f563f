#pragma once
// A connection to trace2d's database that shows one user's sessions and
// nothing of anyone else's: what trace2ctl runs on when the query service
// (docs/security.md, "Per-user access") answers a user who may not read the
// file itself.
//
// The main database is an empty in-memory one; the real file is attached
// read-only under a schema name drawn at random for the connection. In the
// TEMP schema (the first one SQLite searches for an unqualified name), each
// store table gets a view of the same name that keeps only the user's rows
// (sessions by peer_uid, per-session tables by their session's owner, the
// per-uid counters by uid), and each store view is created again from its
// own SQL, so that its unqualified names resolve to those filtered views.
// An authorizer then refuses everything else: a read of a store object
// except from inside its filter view, ATTACH, DETACH, every PRAGMA but
// table_info, every write, and the functions open_database() refuses.
//
// The table list is read from the file's schema at open: new columns need
// nothing, and a table this file does not know is not readable at all.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>

#include "db/sqlite.hpp"

namespace trace2d::ctl {

// How the views treat a store table.
enum class RowFilter {
  own_sessions,   // sessions: peer_uid = the user
  by_session,     // rows keyed by a session id (column `session`)
  by_session_id,  // the same, column `session_id`
  by_peer_uid,    // rows carrying the sender's uid (column `peer_uid`)
  by_uid,         // per-uid counters (column `uid`)
  everything,     // no one's data (schema_version) or the daemon's health
  nothing,        // host-wide figures or paths: the columns, no rows
  shared_names,   // `names`: through the views that join it to own rows
  denied,         // not known to this trace2ctl: not readable at all
};

// The policy for a store table (exposed for the tests and the docs).
[[nodiscard]] RowFilter row_filter_for(std::string_view table);

// Opens `path` for `uid` as described above. Throws like open_database().
[[nodiscard]] db::Database open_restricted_database(const std::string& path, uid_t uid,
                                                    std::chrono::milliseconds timeout);

// Whether `db` was opened by open_restricted_database().
[[nodiscard]] bool is_restricted(const db::Database& db);

// While one lives, statements prepared on a restricted connection come from
// the user (`trace2ctl sql`): they may not read `names` but through the views
// that join it to the user's rows, nor the schema's SQL, nor EXPLAIN.
// Statements trace2ctl writes itself only ever look up names by the ids of
// the user's own rows. No effect on an unrestricted connection.
class UserSqlScope {
 public:
  explicit UserSqlScope(db::Database& db);
  ~UserSqlScope();
  UserSqlScope(const UserSqlScope&) = delete;
  UserSqlScope& operator=(const UserSqlScope&) = delete;

 private:
  bool* m_flag = nullptr;
};

}  // namespace trace2d::ctl
