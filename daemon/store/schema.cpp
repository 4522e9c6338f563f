#include "daemon/store/schema.hpp"

#include <array>
#include <string>

#include "proto/timestamp.hpp"

namespace trace2d::store {
namespace {

struct Migration {
  int version;
  std::string_view description;
  std::string_view sql;
};

// Version 1: the foundation layout. docs/schema.md documents every table,
// view and column; keep the two in step.
constexpr std::string_view k_v1 = R"sql(
CREATE TABLE names (
  id   INTEGER PRIMARY KEY,
  text TEXT NOT NULL UNIQUE
);
-- The event types git defines get fixed ids; others are added as they come.
INSERT INTO names (id, text) VALUES
  (1, 'version'),
  (2, 'too_many_files'),
  (3, 'start'),
  (4, 'exit'),
  (5, 'atexit'),
  (6, 'signal'),
  (7, 'error'),
  (8, 'cmd_path'),
  (9, 'cmd_ancestry'),
  (10, 'cmd_name'),
  (11, 'cmd_mode'),
  (12, 'alias'),
  (13, 'child_start'),
  (14, 'child_exit'),
  (15, 'child_ready'),
  (16, 'thread_start'),
  (17, 'thread_exit'),
  (18, 'exec'),
  (19, 'exec_result'),
  (20, 'def_param'),
  (21, 'def_repo'),
  (22, 'region_enter'),
  (23, 'region_leave'),
  (24, 'data'),
  (25, 'data_json'),
  (26, 'timer'),
  (27, 'th_timer'),
  (28, 'counter'),
  (29, 'th_counter'),
  (30, 'printf');

CREATE TABLE sessions (
  sid            TEXT PRIMARY KEY NOT NULL,
  id             INTEGER NOT NULL UNIQUE,
  parent_sid     TEXT,
  root_sid       TEXT NOT NULL,
  depth          INTEGER NOT NULL,
  evt            TEXT,
  exe            TEXT,
  argv           TEXT,
  cmd_name       TEXT,
  hierarchy      TEXT,
  cmd_mode       TEXT,
  worktree       TEXT,
  cmd_path       TEXT,
  start_time     TEXT,
  end_time       TEXT,
  elapsed        REAL,
  exit_code      INTEGER,
  signo          INTEGER,
  status         TEXT NOT NULL CHECK (status IN ('running', 'complete', 'incomplete')),
  source         TEXT NOT NULL,
  peer_pid       INTEGER,
  peer_uid       INTEGER,
  event_count    INTEGER NOT NULL DEFAULT 0,
  error_count    INTEGER NOT NULL DEFAULT 0,
  problem_count  INTEGER NOT NULL DEFAULT 0,
  first_received TEXT NOT NULL,
  last_received  TEXT NOT NULL,
  time_base_us   INTEGER
);
CREATE INDEX sessions_parent_sid ON sessions (parent_sid);
CREATE INDEX sessions_root_sid ON sessions (root_sid);
CREATE INDEX sessions_start_time ON sessions (start_time);
CREATE INDEX sessions_first_received ON sessions (first_received);

CREATE TABLE event_store (
  session INTEGER NOT NULL,
  seq     INTEGER NOT NULL,
  type    INTEGER NOT NULL,
  thread  INTEGER,
  time_us INTEGER,
  file    INTEGER,
  line    INTEGER,
  body    TEXT NOT NULL,
  raw     BLOB,
  PRIMARY KEY (session, seq)
) WITHOUT ROWID;

CREATE TABLE problem_store (
  session INTEGER NOT NULL,
  seq     INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (session, seq)
) WITHOUT ROWID;

CREATE TABLE rejects (
  id          INTEGER PRIMARY KEY,
  received_at TEXT NOT NULL,
  source      TEXT NOT NULL,
  peer_pid    INTEGER,
  peer_uid    INTEGER,
  reason      TEXT NOT NULL,
  raw         BLOB,
  size        INTEGER NOT NULL
);

-- The event-specific members of each row as one JSON object: the body with
-- braces, or the whole event when the body is stored whole.
CREATE VIEW event_parts AS
SELECT e.session, e.seq, e.type, e.thread, e.time_us, e.file, e.line, e.body, e.raw,
       CASE WHEN substr(e.body, 1, 1) = '{' THEN e.body
            ELSE '{' || substr(e.body, 2) || '}' END AS obj,
       substr(e.body, 1, 1) = '{' AS whole
  FROM event_store e;

CREATE VIEW events AS
SELECT id, sid, seq, event, thread, time,
       json_extract(obj, '$.t_abs') AS t_abs,
       json_extract(obj, '$.t_rel') AS t_rel,
       json_extract(obj, '$.repo') AS repo,
       json_extract(obj, '$.nesting') AS nesting,
       json_extract(obj, '$.category') AS category,
       CASE
         WHEN event IN ('data', 'data_json') THEN json_extract(obj, '$.key')
         WHEN event IN ('region_enter', 'region_leave') THEN json_extract(obj, '$.label')
         WHEN event IN ('cmd_name', 'cmd_mode', 'timer', 'th_timer', 'counter', 'th_counter')
           THEN json_extract(obj, '$.name')
         WHEN event = 'def_param' THEN json_extract(obj, '$.param')
         WHEN event = 'alias' THEN json_extract(obj, '$.alias')
         WHEN event IN ('child_start', 'child_exit', 'child_ready') THEN json_extract(obj, '$.child_id')
         WHEN event IN ('exec', 'exec_result') THEN json_extract(obj, '$.exec_id')
       END AS label,
       CASE
         WHEN event IN ('data', 'data_json', 'def_param') THEN json_extract(obj, '$.value')
         WHEN event IN ('error', 'printf', 'region_enter', 'region_leave') THEN json_extract(obj, '$.msg')
         WHEN event = 'version' THEN json_extract(obj, '$.exe')
         WHEN event IN ('start', 'alias', 'child_start', 'exec') THEN json_extract(obj, '$.argv')
         WHEN event IN ('exit', 'atexit', 'child_exit', 'exec_result') THEN json_extract(obj, '$.code')
         WHEN event = 'signal' THEN json_extract(obj, '$.signo')
         WHEN event = 'cmd_path' THEN json_extract(obj, '$.path')
         WHEN event = 'cmd_name' THEN json_extract(obj, '$.hierarchy')
         WHEN event = 'cmd_ancestry' THEN json_extract(obj, '$.ancestry')
         WHEN event = 'def_repo' THEN json_extract(obj, '$.worktree')
         WHEN event = 'child_ready' THEN json_extract(obj, '$.ready')
         WHEN event IN ('timer', 'th_timer') THEN json_extract(obj, '$.t_total')
         WHEN event IN ('counter', 'th_counter') THEN json_extract(obj, '$.count')
       END AS value,
       CASE WHEN whole THEN body
            ELSE '{"event":' || json_quote(event) || ',"sid":' || json_quote(sid)
                 || CASE WHEN thread_id IS NULL THEN '' ELSE ',"thread":' || json_quote(thread) END
                 || CASE WHEN time_us IS NULL THEN '' ELSE ',"time":"' || time || '"' END
                 || CASE WHEN file_id IS NULL THEN '' ELSE ',"file":' || json_quote(file) END
                 || CASE WHEN line IS NULL THEN '' ELSE ',"line":' || line END
                 || body || '}'
       END AS json,
       raw,
       file,
       line
  FROM (
    SELECT (p.session << 32) | p.seq AS id, s.sid, p.seq,
           COALESCE(et.text, json_extract(p.obj, '$.event')) AS event,
           p.thread AS thread_id, p.file AS file_id, p.time_us, p.line, p.body, p.raw,
           p.obj, p.whole,
           COALESCE(th.text, CASE WHEN p.whole THEN json_extract(p.obj, '$.thread') END) AS thread,
           COALESCE(fi.text, CASE WHEN p.whole THEN json_extract(p.obj, '$.file') END) AS file,
           CASE WHEN p.time_us IS NOT NULL
                THEN strftime('%Y-%m-%dT%H:%M:%S', (s.time_base_us + p.time_us) / 1000000, 'unixepoch')
                     || printf('.%06dZ', (s.time_base_us + p.time_us) % 1000000)
                WHEN p.whole THEN json_extract(p.obj, '$.time')
           END AS time
      FROM event_parts p
      JOIN sessions s ON s.id = p.session
      LEFT JOIN names et ON et.id = p.type
      LEFT JOIN names th ON th.id = p.thread
      LEFT JOIN names fi ON fi.id = p.file
  );

CREATE VIEW problems AS
SELECT s.sid, p.seq, p.message
  FROM problem_store p JOIN sessions s ON s.id = p.session;
)sql";

// Version 2: file sources remember their position; the daemon publishes its
// counters for `trace2ctl status`.
constexpr std::string_view k_v2 = R"sql(
CREATE TABLE file_offsets (
  key        TEXT PRIMARY KEY NOT NULL,
  path       TEXT NOT NULL,
  offset     INTEGER NOT NULL,
  finished   INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL
);

CREATE TABLE daemon_status (
  id                    INTEGER PRIMARY KEY CHECK (id = 1),
  pid                   INTEGER NOT NULL,
  version               TEXT NOT NULL,
  started_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL,
  queue_bytes           INTEGER NOT NULL,
  queue_peak_bytes      INTEGER NOT NULL,
  queue_limit_bytes     INTEGER NOT NULL,
  events_committed      INTEGER NOT NULL,
  failed_commits        INTEGER NOT NULL,
  commit_latency_p50_ms REAL,
  commit_latency_p99_ms REAL,
  commit_latency_max_ms REAL,
  db_bytes              INTEGER,
  wal_bytes             INTEGER
);

CREATE TABLE source_stats (
  source          TEXT PRIMARY KEY NOT NULL,
  address         TEXT,
  channels_opened INTEGER NOT NULL DEFAULT 0,
  channels_open   INTEGER NOT NULL DEFAULT 0,
  bytes           INTEGER NOT NULL DEFAULT 0,
  lines           INTEGER NOT NULL DEFAULT 0,
  events          INTEGER NOT NULL DEFAULT 0,
  rejects         INTEGER NOT NULL DEFAULT 0,
  dropped_lines   INTEGER NOT NULL DEFAULT 0,
  kernel_drops    INTEGER NOT NULL DEFAULT 0,
  too_many_files  INTEGER NOT NULL DEFAULT 0,
  updated_at      TEXT NOT NULL
);
)sql";

constexpr std::array<Migration, 2> k_migrations{{
    {1, "foundation: sessions, events, rejects", k_v1},
    {2, "file offsets, daemon status and source statistics", k_v2},
}};

}  // namespace

int latest_schema_version() { return k_migrations.back().version; }

int current_schema_version(Database& db) {
  const bool has_table =
      db.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
          .value_or(0) > 0;
  if (!has_table) {
    return 0;
  }
  return static_cast<int>(db.query_int("SELECT max(version) FROM schema_version").value_or(0));
}

int apply_migrations(Database& db) {
  const bool fresh =
      db.query_int("SELECT count(*) FROM sqlite_master").value_or(0) == 0;
  if (fresh) {
    // Must precede the first table: lets retention give pages back later.
    db.exec("PRAGMA auto_vacuum = INCREMENTAL");
  }
  db.exec(
      "CREATE TABLE IF NOT EXISTS schema_version ("
      " version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL, description TEXT NOT NULL)");
  const int current = current_schema_version(db);
  if (current > latest_schema_version()) {
    throw SqliteError(SQLITE_ERROR, "database '" + db.path() + "' has schema version " +
                                        std::to_string(current) + ", newer than this trace2d (" +
                                        std::to_string(latest_schema_version()) + ")");
  }
  int applied = 0;
  for (const Migration& m : k_migrations) {
    if (m.version <= current) {
      continue;
    }
    Transaction txn(db);
    db.exec(m.sql);
    Statement record = db.prepare(
        "INSERT INTO schema_version (version, applied_at, description) VALUES (?, ?, ?)");
    record.bind_int(1, m.version);
    record.bind_text(2, proto::format_utc_timestamp(proto::unix_now_us()));
    record.bind_text(3, m.description);
    record.run();
    db.exec("PRAGMA user_version = " + std::to_string(m.version));
    txn.commit();
    ++applied;
  }
  return applied;
}

}  // namespace trace2d::store
