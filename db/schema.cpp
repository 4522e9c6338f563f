#include "db/schema.hpp"

#include <array>
#include <string>

#include "db/event_types.hpp"
#include "proto/event.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::db {
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
-- The event types git defines get fixed ids (seed_event_names()); others
-- are added as they come.

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

// Version 3: the analysis model. Regions and children are paired as events
// arrive (region_store, child_store); the other per-event projections are
// views over event_store, so each event is stored once.
constexpr std::string_view k_v3 = R"sql(
ALTER TABLE sessions ADD COLUMN sid_pid INTEGER;
ALTER TABLE sessions ADD COLUMN argv_key TEXT;
ALTER TABLE sessions ADD COLUMN process_start_us INTEGER;
DROP INDEX sessions_parent_sid;
CREATE INDEX sessions_parent ON sessions (parent_sid, sid_pid);

CREATE TABLE region_store (
  session    INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  thread     INTEGER,
  nesting    INTEGER,
  category   INTEGER,
  label      INTEGER,
  msg        TEXT,
  repo       INTEGER,
  t_start    REAL,
  elapsed    REAL,
  parent_seq INTEGER,
  leave_seq  INTEGER,
  PRIMARY KEY (session, seq)
) WITHOUT ROWID;

CREATE TABLE child_store (
  session     INTEGER NOT NULL,
  child_id    INTEGER NOT NULL,
  start_seq   INTEGER,
  child_class TEXT,
  hook_name   TEXT,
  argv        TEXT,
  argv_key    TEXT,
  use_shell   INTEGER,
  cd          TEXT,
  start_us    INTEGER,
  t_start     REAL,
  pid         INTEGER,
  code        INTEGER,
  ready       TEXT,
  elapsed     REAL,
  end_us      INTEGER,
  end_seq     INTEGER,
  PRIMARY KEY (session, child_id)
) WITHOUT ROWID;

CREATE VIEW regions AS
SELECT (r.session << 32) | r.seq AS id, s.sid, th.text AS thread, r.nesting,
       ca.text AS category, la.text AS label, r.msg, r.repo, r.t_start, r.elapsed,
       CASE WHEN r.parent_seq IS NULL THEN NULL ELSE (r.session << 32) | r.parent_seq END AS parent_region,
       r.seq AS enter_seq, r.leave_seq
  FROM region_store r
  JOIN sessions s ON s.id = r.session
  LEFT JOIN names th ON th.id = r.thread
  LEFT JOIN names ca ON ca.id = r.category
  LEFT JOIN names la ON la.id = r.label;

CREATE VIEW children AS
SELECT s.sid, c.child_id, c.child_class, c.hook_name, c.argv, c.use_shell, c.cd, c.pid, c.code,
       c.ready, c.elapsed, c.t_start,
       CASE WHEN c.start_us IS NULL THEN NULL
            ELSE strftime('%Y-%m-%dT%H:%M:%S', c.start_us / 1000000, 'unixepoch')
                 || printf('.%06dZ', c.start_us % 1000000) END AS start_time,
       CASE WHEN c.end_us IS NULL THEN NULL
            ELSE strftime('%Y-%m-%dT%H:%M:%S', c.end_us / 1000000, 'unixepoch')
                 || printf('.%06dZ', c.end_us % 1000000) END AS end_time,
       COALESCE(
         -- git ran it itself: the pid it reports is the one in the child's SID
         (SELECT k.sid FROM sessions k
           WHERE k.parent_sid = s.sid AND k.sid_pid = c.pid AND c.pid > 0),
         -- through a shell (whose pid git reports): same command, started in the window
         (SELECT k.sid FROM sessions k
           WHERE k.parent_sid = s.sid AND k.argv_key = c.argv_key
             AND (c.start_us IS NULL OR k.process_start_us >= c.start_us)
             AND (c.end_us IS NULL OR k.process_start_us <= c.end_us)
           ORDER BY k.process_start_us LIMIT 1)) AS child_sid,
       c.start_seq, c.end_seq
  FROM child_store c
  JOIN sessions s ON s.id = c.session;

CREATE VIEW execs AS
SELECT s.sid, e.seq, json_extract(e.obj, '$.exec_id') AS exec_id, json_extract(e.obj, '$.exe') AS exe,
       json_extract(e.obj, '$.argv') AS argv,
       (SELECT json_extract(r.obj, '$.code') FROM event_parts r
         WHERE r.session = e.session AND r.type = 19
           AND json_extract(r.obj, '$.exec_id') = json_extract(e.obj, '$.exec_id')) AS code
  FROM event_parts e JOIN sessions s ON s.id = e.session
 WHERE e.type = 18;

CREATE VIEW params AS
SELECT s.sid, p.seq, json_extract(p.obj, '$.scope') AS scope, json_extract(p.obj, '$.param') AS param,
       json_extract(p.obj, '$.value') AS value
  FROM event_parts p JOIN sessions s ON s.id = p.session
 WHERE p.type = 20;

CREATE VIEW data AS
SELECT s.sid, p.seq, th.text AS thread, json_extract(p.obj, '$.repo') AS repo,
       json_extract(p.obj, '$.nesting') AS nesting, json_extract(p.obj, '$.category') AS category,
       json_extract(p.obj, '$.key') AS key,
       CASE WHEN p.type = 25 THEN json(json_extract(p.obj, '$.value'))
            ELSE json_extract(p.obj, '$.value') END AS value,
       CASE WHEN p.type = 25 THEN 'json'
            WHEN json_type(p.obj, '$.value') = 'integer' THEN 'integer'
            ELSE 'string' END AS value_type,
       json_extract(p.obj, '$.t_abs') AS t_abs, json_extract(p.obj, '$.t_rel') AS t_rel
  FROM event_parts p JOIN sessions s ON s.id = p.session LEFT JOIN names th ON th.id = p.thread
 WHERE p.type IN (24, 25);

CREATE VIEW timers AS
SELECT s.sid, p.seq, th.text AS thread, p.type = 27 AS per_thread,
       json_extract(p.obj, '$.category') AS category, json_extract(p.obj, '$.name') AS name,
       json_extract(p.obj, '$.intervals') AS intervals, json_extract(p.obj, '$.t_total') AS t_total,
       json_extract(p.obj, '$.t_min') AS t_min, json_extract(p.obj, '$.t_max') AS t_max
  FROM event_parts p JOIN sessions s ON s.id = p.session LEFT JOIN names th ON th.id = p.thread
 WHERE p.type IN (26, 27);

CREATE VIEW counters AS
SELECT s.sid, p.seq, th.text AS thread, p.type = 29 AS per_thread,
       json_extract(p.obj, '$.category') AS category, json_extract(p.obj, '$.name') AS name,
       json_extract(p.obj, '$.count') AS count
  FROM event_parts p JOIN sessions s ON s.id = p.session LEFT JOIN names th ON th.id = p.thread
 WHERE p.type IN (28, 29);

CREATE VIEW errors AS
SELECT s.sid, p.seq, th.text AS thread, json_extract(p.obj, '$.msg') AS msg,
       json_extract(p.obj, '$.fmt') AS fmt
  FROM event_parts p JOIN sessions s ON s.id = p.session LEFT JOIN names th ON th.id = p.thread
 WHERE p.type = 7;

CREATE VIEW threads AS
SELECT s.sid, th.text AS thread, b.seq AS start_seq,
       CASE WHEN b.time_us IS NULL OR s.process_start_us IS NULL THEN NULL
            ELSE (s.time_base_us + b.time_us - s.process_start_us) / 1e6 END AS t_start,
       (SELECT x.seq FROM event_parts x WHERE x.session = b.session AND x.type = 17 AND x.thread = b.thread
         ORDER BY x.seq LIMIT 1) AS exit_seq,
       (SELECT json_extract(x.obj, '$.t_rel') FROM event_parts x
         WHERE x.session = b.session AND x.type = 17 AND x.thread = b.thread ORDER BY x.seq LIMIT 1) AS elapsed
  FROM event_parts b JOIN sessions s ON s.id = b.session LEFT JOIN names th ON th.id = b.thread
 WHERE b.type = 16;

-- Per command: runs, failures (non-zero exit or a signal), sessions that
-- never finished, and the distribution of elapsed seconds (nearest rank).
CREATE VIEW command_stats AS
WITH timed AS (
  SELECT cmd_name, elapsed,
         row_number() OVER (PARTITION BY cmd_name ORDER BY elapsed) AS rank,
         count(*) OVER (PARTITION BY cmd_name) AS n
    FROM sessions WHERE cmd_name IS NOT NULL AND elapsed IS NOT NULL),
pct AS (
  SELECT cmd_name,
         max(CASE WHEN rank = (n * 50 + 99) / 100 THEN elapsed END) AS p50,
         max(CASE WHEN rank = (n * 90 + 99) / 100 THEN elapsed END) AS p90,
         max(CASE WHEN rank = (n * 99 + 99) / 100 THEN elapsed END) AS p99,
         max(elapsed) AS max
    FROM timed GROUP BY cmd_name)
SELECT s.cmd_name, count(*) AS runs,
       coalesce(sum(s.exit_code != 0 OR s.signo IS NOT NULL), 0) AS failures,
       sum(s.status = 'incomplete') AS incomplete,
       p.p50 AS p50_elapsed, p.p90 AS p90_elapsed, p.p99 AS p99_elapsed, p.max AS max_elapsed,
       sum(s.elapsed) AS total_elapsed
  FROM sessions s LEFT JOIN pct p ON p.cmd_name = s.cmd_name
 WHERE s.cmd_name IS NOT NULL
 GROUP BY s.cmd_name;

-- Per region (category, label): how often, how long.
CREATE VIEW region_stats AS
WITH timed AS (
  SELECT category, label, elapsed,
         row_number() OVER (PARTITION BY category, label ORDER BY elapsed) AS rank,
         count(*) OVER (PARTITION BY category, label) AS n
    FROM region_store WHERE elapsed IS NOT NULL),
pct AS (
  SELECT category, label,
         max(CASE WHEN rank = (n * 50 + 99) / 100 THEN elapsed END) AS p50,
         max(CASE WHEN rank = (n * 90 + 99) / 100 THEN elapsed END) AS p90,
         max(CASE WHEN rank = (n * 99 + 99) / 100 THEN elapsed END) AS p99,
         max(elapsed) AS max, sum(elapsed) AS total, count(*) AS closed
    FROM timed GROUP BY category, label)
SELECT ca.text AS category, la.text AS label, p.closed AS count,
       p.p50 AS p50_elapsed, p.p90 AS p90_elapsed, p.p99 AS p99_elapsed, p.max AS max_elapsed,
       p.total AS total_elapsed
  FROM pct p LEFT JOIN names ca ON ca.id = p.category LEFT JOIN names la ON la.id = p.label;

-- Finished processes, slowest first.
CREATE VIEW slow_sessions AS
SELECT sid, cmd_name, elapsed, exit_code, start_time, worktree, depth, root_sid, event_count
  FROM sessions
 WHERE elapsed IS NOT NULL
 ORDER BY elapsed DESC;
)sql";

// Version 4: what each user sent, and what the per-uid rate limit dropped.
constexpr std::string_view k_v4 = R"sql(
CREATE TABLE uid_stats (
  uid        INTEGER PRIMARY KEY,
  lines      INTEGER NOT NULL DEFAULT 0,
  dropped    INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL
);
)sql";

// Version 5: how often the daemon recreated its database after the file was
// removed or replaced under it.
constexpr std::string_view k_v5 = R"sql(
ALTER TABLE daemon_status ADD COLUMN database_recreated INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 6: a region's names are kept as text when they have no `names`
// id (their sender used up its share of the table), so no one's labels
// depend on what another user sent.
constexpr std::string_view k_v6 = R"sql(
ALTER TABLE region_store ADD COLUMN thread_text TEXT;
ALTER TABLE region_store ADD COLUMN category_text TEXT;
ALTER TABLE region_store ADD COLUMN label_text TEXT;

DROP VIEW regions;
CREATE VIEW regions AS
SELECT (r.session << 32) | r.seq AS id, s.sid, coalesce(th.text, r.thread_text) AS thread, r.nesting,
       coalesce(ca.text, r.category_text) AS category, coalesce(la.text, r.label_text) AS label,
       r.msg, r.repo, r.t_start, r.elapsed,
       CASE WHEN r.parent_seq IS NULL THEN NULL ELSE (r.session << 32) | r.parent_seq END AS parent_region,
       r.seq AS enter_seq, r.leave_seq
  FROM region_store r
  JOIN sessions s ON s.id = r.session
  LEFT JOIN names th ON th.id = r.thread
  LEFT JOIN names ca ON ca.id = r.category
  LEFT JOIN names la ON la.id = r.label;

DROP VIEW region_stats;
CREATE VIEW region_stats AS
WITH named AS (
  SELECT coalesce(ca.text, r.category_text) AS category, coalesce(la.text, r.label_text) AS label, r.elapsed
    FROM region_store r
    LEFT JOIN names ca ON ca.id = r.category
    LEFT JOIN names la ON la.id = r.label
   WHERE r.elapsed IS NOT NULL),
timed AS (
  SELECT category, label, elapsed,
         row_number() OVER (PARTITION BY category, label ORDER BY elapsed) AS rank,
         count(*) OVER (PARTITION BY category, label) AS n
    FROM named),
pct AS (
  SELECT category, label,
         max(CASE WHEN rank = (n * 50 + 99) / 100 THEN elapsed END) AS p50,
         max(CASE WHEN rank = (n * 90 + 99) / 100 THEN elapsed END) AS p90,
         max(CASE WHEN rank = (n * 99 + 99) / 100 THEN elapsed END) AS p99,
         max(elapsed) AS max, sum(elapsed) AS total, count(*) AS closed
    FROM timed GROUP BY category, label)
SELECT category, label, closed AS count,
       p50 AS p50_elapsed, p90 AS p90_elapsed, p99 AS p99_elapsed, max AS max_elapsed,
       total AS total_elapsed
  FROM pct;
)sql";

// Version 7: what each sender holds, so that retention's size bound takes
// from the biggest sender first. `stored_bytes` counts a session's event
// rows (their text plus 16 bytes each); sessions stored before this version
// are estimated at 64 bytes an event (the measured average is 58) rather
// than read again, which on a large database would hold up the start.
constexpr std::string_view k_v7 = R"sql(
ALTER TABLE sessions ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET stored_bytes = event_count * 64;
CREATE INDEX sessions_uid ON sessions (peer_uid, first_received);
CREATE INDEX rejects_uid ON rejects (peer_uid, id);
)sql";


// Version 8: the data view survives a data_json whose value is a JSON string
// (repo's "data-json" holds a Python list's repr, "['--', 'sync']"): json()
// of that text failed the whole query. Such a value is a string. A data
// event's array value (repo's multi-valued setting) is JSON.
constexpr std::string_view k_v8 = R"sql(
DROP VIEW data;
CREATE VIEW data AS
SELECT s.sid, p.seq, th.text AS thread, json_extract(p.obj, '$.repo') AS repo,
       json_extract(p.obj, '$.nesting') AS nesting, json_extract(p.obj, '$.category') AS category,
       json_extract(p.obj, '$.key') AS key,
       CASE WHEN (p.type = 25 AND json_type(p.obj, '$.value') <> 'text')
              OR json_type(p.obj, '$.value') IN ('array', 'object')
            THEN json(json_extract(p.obj, '$.value'))
            ELSE json_extract(p.obj, '$.value') END AS value,
       CASE WHEN (p.type = 25 AND json_type(p.obj, '$.value') <> 'text')
              OR json_type(p.obj, '$.value') IN ('array', 'object') THEN 'json'
            WHEN json_type(p.obj, '$.value') = 'integer' THEN 'integer'
            ELSE 'string' END AS value_type,
       json_extract(p.obj, '$.t_abs') AS t_abs, json_extract(p.obj, '$.t_rel') AS t_rel
  FROM event_parts p JOIN sessions s ON s.id = p.session LEFT JOIN names th ON th.id = p.thread
 WHERE p.type IN (24, 25);
)sql";

// Version 9: the OTLP exporter's durable queue. A session is queued when its
// row is first written, while the export is on (the daemon sets
// otlp_export.enabled at start-up); the exporter removes it from the queue
// once the collector has acknowledged its spans, so nothing acknowledged is
// sent again and nothing committed is skipped, across restarts and crashes.
constexpr std::string_view k_v9 = R"sql(
CREATE TABLE otlp_export (
  id                 INTEGER PRIMARY KEY CHECK (id = 1),
  enabled            INTEGER NOT NULL DEFAULT 0,
  endpoint           TEXT,
  exported_sessions  INTEGER NOT NULL DEFAULT 0,
  exported_spans     INTEGER NOT NULL DEFAULT 0,
  rejected_spans     INTEGER NOT NULL DEFAULT 0,
  dropped_sessions   INTEGER NOT NULL DEFAULT 0,
  failures           INTEGER NOT NULL DEFAULT 0,
  last_success       TEXT,
  last_failure       TEXT,
  last_failure_reason TEXT
);
INSERT INTO otlp_export (id) VALUES (1);
CREATE TABLE otlp_pending (
  session_id INTEGER PRIMARY KEY,
  queued     TEXT NOT NULL
);
CREATE TRIGGER sessions_queue_for_export AFTER INSERT ON sessions
  WHEN (SELECT enabled FROM otlp_export WHERE id = 1)
BEGIN
  INSERT OR IGNORE INTO otlp_pending (session_id, queued)
  VALUES (NEW.id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;
)sql";

// Version 10: rules for what leaves the host (docs/otlp.md, "Rules"). The
// repository's nickname (a def_param, otel.trace2.nickname unless
// configured otherwise) as a sessions column; the sessions a detail rule
// kept from the collector, counted; region-timer and error-pattern
// summaries per session, as the exporter puts them on the process span.
constexpr std::string_view k_v10 = R"sql(
ALTER TABLE sessions ADD COLUMN nickname TEXT;
ALTER TABLE otlp_export ADD COLUMN withheld_sessions INTEGER NOT NULL DEFAULT 0;
CREATE VIEW region_timers AS
SELECT sid, category, label, count(*) AS count, sum(elapsed) AS total_elapsed, max(elapsed) AS max_elapsed
  FROM regions WHERE elapsed IS NOT NULL
 GROUP BY sid, category, label;
CREATE VIEW message_patterns AS
SELECT sid, coalesce(fmt, msg) AS pattern, count(*) AS count, min(msg) AS example
  FROM errors
 GROUP BY sid, coalesce(fmt, msg);
)sql";

// Version 11: the exporter's scale and fairness (docs/otlp.md, "Delivery"),
// and the children view's child_sid found through indexes: by pid (SQLite
// scanned every sibling session for each child_start) and, for a command
// run through a shell, by command and start (sessions_parent_argv).
// The queue keeps each session's sender, indexed, so that every round gives
// each uid a turn without reading the others' backlog; the child_starts of a
// session are indexed by pid and start, so that a queued session's place in
// its tree is found without loading the tree (model::load_export_rows). A
// session that retention deletes leaves the queue with it, counted, whether
// the export is on or not. `trace2d import` never queues: its files may come
// from any host, and the exported resource names this one (host.name);
// `trace2ctl export --format otlp-json` sends them on purpose.
constexpr std::string_view k_v11 = R"sql(
ALTER TABLE otlp_pending ADD COLUMN uid INTEGER NOT NULL DEFAULT -1;
UPDATE otlp_pending SET uid = coalesce((SELECT peer_uid FROM sessions WHERE id = session_id), -1);
CREATE INDEX otlp_pending_uid ON otlp_pending (uid, session_id);
DROP TRIGGER sessions_queue_for_export;
CREATE TRIGGER sessions_queue_for_export AFTER INSERT ON sessions
  WHEN (SELECT enabled FROM otlp_export WHERE id = 1) AND NEW.source != 'import'
BEGIN
  INSERT OR IGNORE INTO otlp_pending (session_id, queued, uid)
  VALUES (NEW.id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), coalesce(NEW.peer_uid, -1));
END;
UPDATE otlp_export SET dropped_sessions = dropped_sessions +
  (SELECT count(*) FROM otlp_pending WHERE session_id NOT IN (SELECT id FROM sessions)) WHERE id = 1;
DELETE FROM otlp_pending WHERE session_id NOT IN (SELECT id FROM sessions);
CREATE TRIGGER sessions_unqueue_deleted AFTER DELETE ON sessions
  WHEN EXISTS (SELECT 1 FROM otlp_pending WHERE session_id = OLD.id)
BEGIN
  DELETE FROM otlp_pending WHERE session_id = OLD.id;
  UPDATE otlp_export SET dropped_sessions = dropped_sessions + 1 WHERE id = 1;
END;
CREATE INDEX child_store_pid ON child_store (session, pid);
CREATE INDEX child_store_start ON child_store (session, start_us);
CREATE INDEX sessions_parent_argv ON sessions (parent_sid, argv_key, process_start_us);
DROP VIEW children;
CREATE VIEW children AS
SELECT s.sid, c.child_id, c.child_class, c.hook_name, c.argv, c.use_shell, c.cd, c.pid, c.code,
       c.ready, c.elapsed, c.t_start,
       CASE WHEN c.start_us IS NULL THEN NULL
            ELSE strftime('%Y-%m-%dT%H:%M:%S', c.start_us / 1000000, 'unixepoch')
                 || printf('.%06dZ', c.start_us % 1000000) END AS start_time,
       CASE WHEN c.end_us IS NULL THEN NULL
            ELSE strftime('%Y-%m-%dT%H:%M:%S', c.end_us / 1000000, 'unixepoch')
                 || printf('.%06dZ', c.end_us % 1000000) END AS end_time,
       COALESCE(
         -- git ran it itself: the pid it reports is the one in the child's
         -- SID. (The test of the pid stays outside the subquery: inside,
         -- SQLite turned it into sid_pid > 0 and scanned every sibling.)
         CASE WHEN c.pid > 0 THEN
           (SELECT k.sid FROM sessions k WHERE k.parent_sid = s.sid AND k.sid_pid = c.pid) END,
         -- through a shell (whose pid git reports): same command, started in the window
         (SELECT k.sid FROM sessions k
           WHERE k.parent_sid = s.sid AND k.argv_key = c.argv_key
             AND (c.start_us IS NULL OR k.process_start_us >= c.start_us)
             AND (c.end_us IS NULL OR k.process_start_us <= c.end_us)
           ORDER BY k.process_start_us LIMIT 1)) AS child_sid,
       c.start_seq, c.end_seq
  FROM child_store c
  JOIN sessions s ON s.id = c.session;
)sql";

// Version 12: the storage rule (docs/configuration.md, "[storage]"): the
// sessions it kept out of the database, and their events, per sender and
// rule: counted, not silent.
constexpr std::string_view k_v12 = R"sql(
CREATE TABLE withheld_stats (
  uid        INTEGER NOT NULL,
  rule       TEXT NOT NULL,
  sessions   INTEGER NOT NULL DEFAULT 0,
  events     INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (uid, rule)
);
)sql";

// Version 13: what the stitcher holds in memory for live sessions, and the
// values it cut or did not keep there (over the per-value bound, or over
// their uid's bound: limits.per_uid_live_mib).
constexpr std::string_view k_v13 = R"sql(
ALTER TABLE daemon_status ADD COLUMN live_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE daemon_status ADD COLUMN values_cut INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 14: one index fewer on `sessions`, and the query planner's
// statistics. No query reads sessions_root_sid (trees are found through the
// SID's primary key, the exporter's placement by id), yet every session row
// paid for it, inserted and deleted. trace2d never runs ANALYZE (its plans
// must not change with what one sender stored), and without statistics
// SQLite started `regions` joined to `sessions` on a time window or a
// command from a scan of every region. These fixed statistics describe the
// shape of any trace2d database (a session: 20 events, 10 regions, a few
// children; a parent: a few children; a sender: many sessions), not its
// size, so the plans are the same from the first session on. A user's
// ANALYZE replaces them with measured ones.
constexpr std::string_view k_v14 = R"sql(
DROP INDEX sessions_root_sid;
ANALYZE sqlite_schema;
DELETE FROM sqlite_stat1;
INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES
  ('sessions', 'sqlite_autoindex_sessions_1', '1000000 1'),
  ('sessions', 'sqlite_autoindex_sessions_2', '1000000 1'),
  ('sessions', 'sessions_start_time', '1000000 2'),
  ('sessions', 'sessions_first_received', '1000000 2'),
  ('sessions', 'sessions_parent', '1000000 4 1'),
  ('sessions', 'sessions_parent_argv', '1000000 4 2 1'),
  ('sessions', 'sessions_uid', '1000000 50000 2'),
  ('event_store', 'event_store', '20000000 20 1'),
  ('region_store', 'region_store', '10000000 10 1'),
  ('child_store', 'child_store', '300000 3 1'),
  ('child_store', 'child_store_pid', '300000 3 1'),
  ('child_store', 'child_store_start', '300000 3 1');
ANALYZE sqlite_schema;
)sql";

// Version 15: the members most events begin with are kept as numbers, not
// text. After git's common members, a line's remainder starts with some of
// "repo", "t_abs", "t_rel", "nesting", "category" and "label", in that
// order (region_enter, region_leave, data, timer, start, exit ...); the
// encoder moves the ones it can give back byte for byte into columns
// (repo, nesting: integers; t_abs, t_rel: microseconds of git's "%.6f";
// category, label: ids into `names`), and `body` keeps what follows. The
// key text was most of a region event's row (docs/architecture.md, "Storage
// layout"). Rows written before keep their whole remainder in `body`, with
// these columns NULL: the same view reads both.
constexpr std::string_view k_v15 = R"sql(
ALTER TABLE event_store ADD COLUMN repo INTEGER;
ALTER TABLE event_store ADD COLUMN t_abs_us INTEGER;
ALTER TABLE event_store ADD COLUMN t_rel_us INTEGER;
ALTER TABLE event_store ADD COLUMN nesting INTEGER;
ALTER TABLE event_store ADD COLUMN category INTEGER;
ALTER TABLE event_store ADD COLUMN label INTEGER;

DROP VIEW event_parts;
CREATE VIEW event_parts AS
SELECT e.session, e.seq, e.type, e.thread, e.time_us, e.file, e.line,
       CASE WHEN e.repo IS NULL AND e.t_abs_us IS NULL AND e.t_rel_us IS NULL AND e.nesting IS NULL
                 AND e.category IS NULL AND e.label IS NULL THEN e.body
            ELSE CASE WHEN e.repo IS NULL THEN '' ELSE ',"repo":' || e.repo END
              || CASE WHEN e.t_abs_us IS NULL THEN ''
                      ELSE printf(',"t_abs":%d.%06d', e.t_abs_us / 1000000, e.t_abs_us % 1000000) END
              || CASE WHEN e.t_rel_us IS NULL THEN ''
                      ELSE printf(',"t_rel":%d.%06d', e.t_rel_us / 1000000, e.t_rel_us % 1000000) END
              || CASE WHEN e.nesting IS NULL THEN '' ELSE ',"nesting":' || e.nesting END
              || CASE WHEN e.category IS NULL THEN '' ELSE ',"category":' || json_quote(ca.text) END
              || CASE WHEN e.label IS NULL THEN '' ELSE ',"label":' || json_quote(la.text) END
              || e.body END AS body,
       e.raw,
       CASE WHEN substr(e.body, 1, 1) = '{' THEN e.body
            ELSE '{' || substr(
                   CASE WHEN e.repo IS NULL THEN '' ELSE ',"repo":' || e.repo END
                || CASE WHEN e.t_abs_us IS NULL THEN ''
                        ELSE printf(',"t_abs":%d.%06d', e.t_abs_us / 1000000, e.t_abs_us % 1000000) END
                || CASE WHEN e.t_rel_us IS NULL THEN ''
                        ELSE printf(',"t_rel":%d.%06d', e.t_rel_us / 1000000, e.t_rel_us % 1000000) END
                || CASE WHEN e.nesting IS NULL THEN '' ELSE ',"nesting":' || e.nesting END
                || CASE WHEN e.category IS NULL THEN '' ELSE ',"category":' || json_quote(ca.text) END
                || CASE WHEN e.label IS NULL THEN '' ELSE ',"label":' || json_quote(la.text) END
                || e.body, 2) || '}' END AS obj,
       substr(e.body, 1, 1) = '{' AS whole,
       e.repo, e.t_abs_us, e.t_rel_us, e.nesting, e.category, e.label
  FROM event_store e
  LEFT JOIN names ca ON ca.id = e.category
  LEFT JOIN names la ON la.id = e.label;

-- What was taken out of the body is read from its columns where it can be
-- (the body is rebuilt for `json`, and for the members that stayed in it).
DROP VIEW events;
CREATE VIEW events AS
SELECT id, sid, seq, event, thread, time,
       CASE WHEN t_abs_us IS NULL THEN json_extract(obj, '$.t_abs')
            ELSE CAST(printf('%d.%06d', t_abs_us / 1000000, t_abs_us % 1000000) AS REAL) END AS t_abs,
       CASE WHEN t_rel_us IS NULL THEN json_extract(obj, '$.t_rel')
            ELSE CAST(printf('%d.%06d', t_rel_us / 1000000, t_rel_us % 1000000) AS REAL) END AS t_rel,
       coalesce(repo_id, json_extract(obj, '$.repo')) AS repo,
       coalesce(nesting_n, json_extract(obj, '$.nesting')) AS nesting,
       coalesce(category_text, json_extract(obj, '$.category')) AS category,
       CASE
         WHEN event IN ('data', 'data_json') THEN json_extract(obj, '$.key')
         WHEN event IN ('region_enter', 'region_leave') THEN coalesce(label_text, json_extract(obj, '$.label'))
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
           p.obj, p.whole, p.repo AS repo_id, p.t_abs_us, p.t_rel_us, p.nesting AS nesting_n,
           ca.text AS category_text, la.text AS label_text,
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
      LEFT JOIN names ca ON ca.id = p.category
      LEFT JOIN names la ON la.id = p.label
  );
)sql";

// Version 16: lineage with ownership. parent_sid, root_sid and depth state
// what the SID says, always; tree_sid is the top of the session's owner's
// tree (docs/schema.md, `tree_sid`), which every view of a tree (trace2ctl,
// the OTLP export) follows, so that a session of one uid is never drawn in
// another uid's tree, nor moves its timeline. Rows stored before were
// re-rooted by the old rule (another uid's parent: parent_sid NULL, depth
// 0, root_sid its own SID, and its children's root_sid and depth counted
// from it): that root_sid is their tree_sid, and their SID's word is put
// back. (rtrim() by every character but '/' leaves the SID up to its last
// '/'.) A session's child_sid is only a session of the same owner: another
// uid's session with the right parent and pid must not take a child's
// place in its parent's tree. No index: a tree is read by its SID's range
// on the primary key, and tree_sid and peer_uid are tested on those rows.
constexpr std::string_view k_v16 = R"sql(
ALTER TABLE sessions ADD COLUMN tree_sid TEXT;
UPDATE sessions SET tree_sid = root_sid;
UPDATE sessions
   SET parent_sid = substr(rtrim(sid, replace(sid, '/', '')), 1, length(rtrim(sid, replace(sid, '/', ''))) - 1),
       root_sid = substr(sid, 1, instr(sid, '/') - 1),
       depth = length(sid) - length(replace(sid, '/', ''))
 WHERE instr(sid, '/') > 0
   AND (parent_sid IS NULL OR root_sid != substr(sid, 1, instr(sid, '/') - 1)
        OR depth != length(sid) - length(replace(sid, '/', '')));
DROP VIEW children;
CREATE VIEW children AS
SELECT s.sid, c.child_id, c.child_class, c.hook_name, c.argv, c.use_shell, c.cd, c.pid, c.code,
       c.ready, c.elapsed, c.t_start,
       CASE WHEN c.start_us IS NULL THEN NULL
            ELSE strftime('%Y-%m-%dT%H:%M:%S', c.start_us / 1000000, 'unixepoch')
                 || printf('.%06dZ', c.start_us % 1000000) END AS start_time,
       CASE WHEN c.end_us IS NULL THEN NULL
            ELSE strftime('%Y-%m-%dT%H:%M:%S', c.end_us / 1000000, 'unixepoch')
                 || printf('.%06dZ', c.end_us % 1000000) END AS end_time,
       COALESCE(
         CASE WHEN c.pid > 0 THEN
           (SELECT k.sid FROM sessions k
             WHERE k.parent_sid = s.sid AND k.sid_pid = c.pid AND k.peer_uid IS s.peer_uid) END,
         (SELECT k.sid FROM sessions k
           WHERE k.parent_sid = s.sid AND k.argv_key = c.argv_key AND k.peer_uid IS s.peer_uid
             AND (c.start_us IS NULL OR k.process_start_us >= c.start_us)
             AND (c.end_us IS NULL OR k.process_start_us <= c.end_us)
           ORDER BY k.process_start_us LIMIT 1)) AS child_sid,
       c.start_seq, c.end_seq
  FROM child_store c
  JOIN sessions s ON s.id = c.session;
)sql";

// Version 17: a session that lost lines to a bound (the rate valve, its
// uid's share of the memory bound, a line too long or cut short) says how
// many; its problem row (seq -1) says why.
constexpr std::string_view k_v17 = R"sql(
ALTER TABLE sessions ADD COLUMN lines_lost INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 18: what a session's row and its index entries take (its SIDs,
// its texts: daemon/store/row_cost.hpp), kept with the row so that each
// write charges its sender the difference; `stored_bytes` includes it.
// Rows written before are charged their row when next written.
constexpr std::string_view k_v18 = R"sql(
ALTER TABLE sessions ADD COLUMN row_bytes INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 19: nothing lost to a misconfiguration (docs/otlp.md, "Delivery").
// A collector that refuses the exporter's credentials or path pauses the
// export, which keeps the queue: `paused_since` says since when (NULL while
// it delivers), `last_failure_reason` why. Sessions dropped from the queue
// are counted by reason (`otlp_dropped`): a request the collector rejects as
// malformed (400), one session too large even alone (413), or retention
// deleting a queued session; `dropped_sessions` stays their total, with
// the drops before this version, which had no reason kept.
constexpr std::string_view k_v19 = R"sql(
ALTER TABLE otlp_export ADD COLUMN paused_since TEXT;
CREATE TABLE otlp_dropped (
  reason   TEXT PRIMARY KEY,
  sessions INTEGER NOT NULL DEFAULT 0
);
INSERT INTO otlp_dropped (reason) VALUES ('bad_request'), ('too_large'), ('retention');
DROP TRIGGER sessions_unqueue_deleted;
CREATE TRIGGER sessions_unqueue_deleted AFTER DELETE ON sessions
  WHEN EXISTS (SELECT 1 FROM otlp_pending WHERE session_id = OLD.id)
BEGIN
  DELETE FROM otlp_pending WHERE session_id = OLD.id;
  UPDATE otlp_export SET dropped_sessions = dropped_sessions + 1 WHERE id = 1;
  UPDATE otlp_dropped SET sessions = sessions + 1 WHERE reason = 'retention';
END;
)sql";

// Version 20: a data event's "key" kept as a names id. In data and
// data_json events "key" follows "category" ("data(index, read/cache_nr)"):
// a short text from a small set, repeated in every such event, as
// category and label were before version 15. The codec takes it after
// "label" (db/event_codec.hpp); rows written before keep it in `body`.
constexpr std::string_view k_v20 = R"sql(
ALTER TABLE event_store ADD COLUMN key INTEGER;

DROP VIEW event_parts;
CREATE VIEW event_parts AS
SELECT e.session, e.seq, e.type, e.thread, e.time_us, e.file, e.line,
       CASE WHEN e.repo IS NULL AND e.t_abs_us IS NULL AND e.t_rel_us IS NULL AND e.nesting IS NULL
                 AND e.category IS NULL AND e.label IS NULL AND e.key IS NULL THEN e.body
            ELSE CASE WHEN e.repo IS NULL THEN '' ELSE ',"repo":' || e.repo END
              || CASE WHEN e.t_abs_us IS NULL THEN ''
                      ELSE printf(',"t_abs":%d.%06d', e.t_abs_us / 1000000, e.t_abs_us % 1000000) END
              || CASE WHEN e.t_rel_us IS NULL THEN ''
                      ELSE printf(',"t_rel":%d.%06d', e.t_rel_us / 1000000, e.t_rel_us % 1000000) END
              || CASE WHEN e.nesting IS NULL THEN '' ELSE ',"nesting":' || e.nesting END
              || CASE WHEN e.category IS NULL THEN '' ELSE ',"category":' || json_quote(ca.text) END
              || CASE WHEN e.label IS NULL THEN '' ELSE ',"label":' || json_quote(la.text) END
              || CASE WHEN e.key IS NULL THEN '' ELSE ',"key":' || json_quote(ke.text) END
              || e.body END AS body,
       e.raw,
       CASE WHEN substr(e.body, 1, 1) = '{' THEN e.body
            ELSE '{' || substr(
                   CASE WHEN e.repo IS NULL THEN '' ELSE ',"repo":' || e.repo END
                || CASE WHEN e.t_abs_us IS NULL THEN ''
                        ELSE printf(',"t_abs":%d.%06d', e.t_abs_us / 1000000, e.t_abs_us % 1000000) END
                || CASE WHEN e.t_rel_us IS NULL THEN ''
                        ELSE printf(',"t_rel":%d.%06d', e.t_rel_us / 1000000, e.t_rel_us % 1000000) END
                || CASE WHEN e.nesting IS NULL THEN '' ELSE ',"nesting":' || e.nesting END
                || CASE WHEN e.category IS NULL THEN '' ELSE ',"category":' || json_quote(ca.text) END
                || CASE WHEN e.label IS NULL THEN '' ELSE ',"label":' || json_quote(la.text) END
                || CASE WHEN e.key IS NULL THEN '' ELSE ',"key":' || json_quote(ke.text) END
                || e.body, 2) || '}' END AS obj,
       substr(e.body, 1, 1) = '{' AS whole,
       e.repo, e.t_abs_us, e.t_rel_us, e.nesting, e.category, e.label, e.key
  FROM event_store e
  LEFT JOIN names ca ON ca.id = e.category
  LEFT JOIN names la ON la.id = e.label
  LEFT JOIN names ke ON ke.id = e.key;
)sql";

// Version 21: the two indexes by parent hold children only. They serve
// children.child_sid (a parent's child by pid, or by command and start),
// whose every lookup names a parent (`parent_sid = ...`, which SQLite knows
// implies NOT NULL); a root session's entries, most of them with a NULL
// parent, were never read, yet every root paid for them on insert and in
// pages (3% of a database of short commands: bench/costs.md, "Storage layout").
// The statistics dropped with the indexes are written back as version 14
// gave them.
constexpr std::string_view k_v21 = R"sql(
DROP INDEX sessions_parent;
CREATE INDEX sessions_parent ON sessions (parent_sid, sid_pid) WHERE parent_sid IS NOT NULL;
DROP INDEX sessions_parent_argv;
CREATE INDEX sessions_parent_argv ON sessions (parent_sid, argv_key, process_start_us)
  WHERE parent_sid IS NOT NULL;
DELETE FROM sqlite_stat1 WHERE idx IN ('sessions_parent', 'sessions_parent_argv');
INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES
  ('sessions', 'sessions_parent', '1000000 4 1'),
  ('sessions', 'sessions_parent_argv', '1000000 4 2 1');
ANALYZE sqlite_schema;
)sql";

// A wrapper that replaced itself with git through the client library's
// execvp() ends with the unknown code -1 and git's session (same pid) under
// it: no more a failure than git's own exec, which ends incomplete.
constexpr std::string_view k_v22 = R"sql(
DROP VIEW command_stats;
CREATE VIEW command_stats AS
WITH timed AS (
  SELECT cmd_name, elapsed,
         row_number() OVER (PARTITION BY cmd_name ORDER BY elapsed) AS rank,
         count(*) OVER (PARTITION BY cmd_name) AS n
    FROM sessions WHERE cmd_name IS NOT NULL AND elapsed IS NOT NULL),
pct AS (
  SELECT cmd_name,
         max(CASE WHEN rank = (n * 50 + 99) / 100 THEN elapsed END) AS p50,
         max(CASE WHEN rank = (n * 90 + 99) / 100 THEN elapsed END) AS p90,
         max(CASE WHEN rank = (n * 99 + 99) / 100 THEN elapsed END) AS p99,
         max(elapsed) AS max
    FROM timed GROUP BY cmd_name)
SELECT s.cmd_name, count(*) AS runs,
       coalesce(sum((s.exit_code != 0 AND NOT (s.exit_code = -1 AND EXISTS
                       (SELECT 1 FROM sessions x WHERE x.parent_sid = s.sid AND x.sid_pid = s.sid_pid)))
                    OR s.signo IS NOT NULL), 0) AS failures,
       sum(s.status = 'incomplete') AS incomplete,
       p.p50 AS p50_elapsed, p.p90 AS p90_elapsed, p.p99 AS p99_elapsed, p.max AS max_elapsed,
       sum(s.elapsed) AS total_elapsed
  FROM sessions s LEFT JOIN pct p ON p.cmd_name = s.cmd_name
 WHERE s.cmd_name IS NOT NULL
 GROUP BY s.cmd_name;
)sql";

// Version 23: what retention deleted since the daemon started, and the
// bytes of the pages in use, which the size bound bounds (the file shrinks
// to them only as free pages are given back).
constexpr std::string_view k_v23 = R"sql(
ALTER TABLE daemon_status ADD COLUMN retention_sessions_deleted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE daemon_status ADD COLUMN retention_events_deleted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE daemon_status ADD COLUMN retention_rejects_deleted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE daemon_status ADD COLUMN db_used_bytes INTEGER;
)sql";

constexpr std::array<Migration, 23> k_migrations{{
    {1, "foundation: sessions, events, rejects", k_v1},
    {2, "file offsets, daemon status and source statistics", k_v2},
    {3, "analysis model: regions, children, projections, statistics", k_v3},
    {4, "per-uid line counts and rate-limit drops", k_v4},
    {5, "daemon status: database recreations", k_v5},
    {6, "region names kept as text when they have no id", k_v6},
    {7, "bytes stored per session, indexes by sender for retention", k_v7},
    {8, "data view: a data_json value that is a JSON string", k_v8},
    {9, "the OTLP exporter's queue and status", k_v9},
    {10, "rules for what leaves the host: nickname, withheld sessions, summaries", k_v10},
    {11, "export queue by sender, retention leaves it; child_starts and child sessions found by index", k_v11},
    {12, "the storage rule: sessions withheld, per uid and rule", k_v12},
    {13, "daemon status: bytes held for live sessions, values cut in memory", k_v13},
    {14, "sessions: no root_sid index; fixed query planner statistics", k_v14},
    {15, "event_store: the leading repo, t_abs, t_rel, nesting, category and label as numbers", k_v15},
    {16, "sessions.tree_sid: lineage with ownership; parent_sid, root_sid and depth as the SID says", k_v16},
    {17, "sessions: lines lost to a bound", k_v17},
    {18, "sessions: the bytes a session's row and index entries take, charged to its sender", k_v18},
    {19, "otlp export: paused_since, sessions dropped by reason", k_v19},
    {20, "event_store: a data event's key as a names id", k_v20},
    {21, "sessions: the indexes by parent hold children only", k_v21},
    {22, "command_stats: a process that exec'd a traced program with the unknown code -1 did not fail", k_v22},
    {23, "daemon status: what retention deleted, the bytes of pages in use", k_v23},
}};

// Git's event types get the ids EventKind + 1 (event_types.hpp), seeded
// once from proto's list of names with the first migration. The views of
// later migrations name some of these ids; they are stored, so they never
// change.
static_assert(stored_type(proto::EventKind::version) == 1);
static_assert(stored_type(proto::EventKind::error) == 7);
static_assert(stored_type(proto::EventKind::thread_start) == 16);
static_assert(stored_type(proto::EventKind::thread_exit) == 17);
static_assert(stored_type(proto::EventKind::exec) == 18);
static_assert(stored_type(proto::EventKind::exec_result) == 19);
static_assert(stored_type(proto::EventKind::def_param) == 20);
static_assert(stored_type(proto::EventKind::data) == 24);
static_assert(stored_type(proto::EventKind::data_json) == 25);
static_assert(stored_type(proto::EventKind::timer) == 26);
static_assert(stored_type(proto::EventKind::th_timer) == 27);
static_assert(stored_type(proto::EventKind::counter) == 28);
static_assert(stored_type(proto::EventKind::th_counter) == 29);
static_assert(stored_type(proto::EventKind::printf) == 30);

void seed_event_names(Database& db) {
  Statement insert = db.prepare("INSERT INTO names (id, text) VALUES (?, ?)");
  for (int kind = static_cast<int>(proto::EventKind::version); kind <= static_cast<int>(proto::EventKind::printf);
       ++kind) {
    insert.bind_int(1, stored_type(static_cast<proto::EventKind>(kind)));
    insert.bind_text(2, proto::to_string(static_cast<proto::EventKind>(kind)));
    insert.run();
  }
}

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

int apply_migrations(Database& db) { return apply_migrations(db, latest_schema_version()); }

int apply_migrations(Database& db, int up_to) {
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
    if (m.version <= current || m.version > up_to) {
      continue;
    }
    Transaction txn(db);
    db.exec(m.sql);
    if (m.version == 1) {
      seed_event_names(db);
    }
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

}  // namespace trace2d::db
