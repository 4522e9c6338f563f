#pragma once
// The database schema: created and upgraded by the daemon at start-up.
// Each migration runs in its own transaction and is recorded in
// `schema_version`; a database newer than this build is refused.

#include "db/sqlite.hpp"

namespace trace2d::db {

[[nodiscard]] int latest_schema_version();
// 0 for an empty database.
[[nodiscard]] int current_schema_version(Database& db);
// Brings `db` to the latest version; returns how many migrations ran.
int apply_migrations(Database& db);
// Brings `db` to version `up_to` only: a database as an earlier trace2d
// wrote it, for testing the later migrations on it.
int apply_migrations(Database& db, int up_to);

}  // namespace trace2d::db
