// Fuzz target: sequences of (mostly valid) Trace2 events built from the fuzz
// input go through the daemon's pipeline minus its threads and sockets:
// proto::Parser → stitch::Stitcher → store::EventEncoder → store::RowWriter
// into a real SQLite file, with commits, channel ends, evictions, idle
// expiry and crash-restarts (uncommitted work thrown away, the store
// reopened as trace2d does after SIGKILL) interleaved. Then the database must
// hold exactly what was committed:
//
//   - PRAGMA integrity_check is "ok";
//   - every event placed in a committed batch is stored, once, and
//     coalesce(raw, json) in the `events` view is the line as it was sent;
//     json is valid JSON;
//   - each session's event_count equals its stored events, numbered 0..n-1;
//     error_count and problem_count agree with the events and problems;
//   - regions reference existing parent regions and their own enter/leave
//     events; children reference their child_start/child_exit events;
//   - trace2ctl's process-tree model loads every session's tree and every
//     renderer draws it (tree_check.hpp says what is checked);
//   - once every session has ended and been forgotten, the bytes charged to
//     their uid (stitch/live_memory.hpp) are all released.
//
// The input is read with fuzz::InputReader: its bytes steer each choice
// (which operation, event, SID, thread, field values, which corruption).

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/stitch/stitcher.hpp"
#include "db/database_setup.hpp"
#include "daemon/store/event_encoder.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/row_writer.hpp"
#include "daemon/store/session_catalog_db.hpp"
#include "db/sqlite.hpp"
#include "proto/json_quote.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"
#include "tests/fuzz/input_reader.hpp"
#include "tests/fuzz/tree_check.hpp"

namespace {

using namespace trace2d;
using namespace std::string_literals;

void check(bool condition, const std::string& what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_stitcher: invariant broken: %s\n", what.c_str());
    std::abort();
  }
}

// A directory of its own (on tmpfs when there is one) with a migrated
// template database: each input starts from a copy of it, which is much
// faster than creating the schema every time.
class Workspace {
 public:
  Workspace() {
    std::string pattern = (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp");
    pattern += "/t2d-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    m_dir = pattern;
    m_template = (m_dir / "template.db").string();
    m_work = (m_dir / "work.db").string();
    // Closing the only connection checkpoints the WAL into the file.
    db::Database db = db::open_for_writing(m_template);
  }
  ~Workspace() {
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // A fresh database; returns its path.
  const std::string& fresh() {
    for (const char* suffix : {"-wal", "-shm"}) {
      std::filesystem::remove(m_work + suffix);
    }
    std::filesystem::copy_file(m_template, m_work, std::filesystem::copy_options::overwrite_existing);
    return m_work;
  }

 private:
  std::filesystem::path m_dir;
  std::string m_template;
  std::string m_work;
};

// The daemon's pipeline on one thread, as tests/daemon/store_fixture.hpp has
// it. Destroying it without commit() is a crash: the batch is lost.
class Store {
 public:
  explicit Store(const std::string& path)
      : m_db(db::open_for_writing(path)),
        m_catalog(path),
        m_stitcher(m_catalog, m_catalog.next_session_id(), options()),
        m_encoder(m_names),
        m_rows(m_db) {
    m_names.load(m_db);
  }

  // Bounds small enough for short fuzzed lines to reach them: values cut,
  // not kept, regions not held open, sessions refused.
  static stitch::Stitcher::Options options() {
    stitch::Stitcher::Options o;
    o.max_value_bytes = 24;
    o.max_live_bytes_per_uid = 16 * 1024;
    return o;
  }

  // Parses and places one line; the placement when it became an event.
  std::optional<stitch::EventPlacement> ingest(const std::string& line, const ingest::Origin& origin,
                                          std::int64_t received_us) {
    if (!m_parser.parse(line, 0, m_event)) {
      return std::nullopt;
    }
    const std::optional<stitch::EventPlacement> placement = m_stitcher.place(m_event, origin, received_us);
    if (placement) {
      m_encoder.encode(m_event, line, *placement, m_batch);
    }
    return placement;
  }

  void commit() {
    stitch::StitchChanges changes;
    m_stitcher.collect_changes(changes, ++m_batches);
    m_encoder.encode(changes, m_batch);
    m_db.exec("BEGIN IMMEDIATE");
    m_rows.write(m_batch);  // a constraint violation throws: the fuzzer reports it
    m_db.exec("COMMIT");
    m_batch = store::WriteBatch();
    m_committed = m_batches;
  }

  [[nodiscard]] stitch::Stitcher& stitcher() { return m_stitcher; }
  [[nodiscard]] db::Database& db() { return m_db; }
  [[nodiscard]] std::uint64_t committed_batch() const { return m_committed; }

 private:
  db::Database m_db;
  store::NameTable m_names;
  store::DatabaseSessionCatalog m_catalog;
  stitch::Stitcher m_stitcher;
  store::EventEncoder m_encoder;
  store::RowWriter m_rows;
  proto::Parser m_parser;
  proto::Event m_event;
  store::WriteBatch m_batch;
  std::uint64_t m_batches = 0;
  std::uint64_t m_committed = 0;
};

const std::vector<std::string>& sids() {
  static const std::vector<std::string> pool = {
      "20261121T100000.000000Z-H0a7c9cdf-P00001000",
      "20261121T100000.000000Z-H0a7c9cdf-P00001000/20261121T100000.100000Z-H0a7c9cdf-P00001001",
      "20261121T100000.000000Z-H0a7c9cdf-P00001000/20261121T100000.100000Z-H0a7c9cdf-P00001001/"
      "20261121T100000.200000Z-H0a7c9cdf-P00001002",
      "ci job 42/step 7/20261121T100000.300000Z-H0a7c9cdf-P00001003",
      "../../etc/passwd",
      "a//b/",
      "quote\"and\\backslash",
      "control\x01\x1f\n\r\t"s,
      "caf\xc3\xa9-P000000ff",
      "bad\xff\xfeutf8",
      "nul\0inside"s,
      std::string(4096, 's'),
      std::string(4097, 'S'),
  };
  return pool;
}

const std::vector<std::string>& words() {
  static const std::vector<std::string> pool = {
      "index", "status", "do_read_index", "", "a \"quoted\" word", "back\\slash",
      "ctl\x01\x1f\x7f"s, "caf\xc3\xa9", "\xe2\x80\xa8", "\xff\xc0\xaf", "/tmp/repo",
      std::string(300, 'w'), "nul\0"s, "\xf0\x9f\x98\x80"};
  return pool;
}

constexpr std::string_view k_event_names[] = {
    "version",  "too_many_files", "start",      "exit",        "atexit",       "signal",
    "error",    "cmd_path",       "cmd_ancestry", "cmd_name",  "cmd_mode",     "alias",
    "child_start", "child_exit",  "child_ready", "thread_start", "thread_exit", "exec",
    "exec_result", "def_param",   "def_repo",   "region_enter", "region_leave", "data",
    "data_json", "timer",         "th_timer",   "counter",     "th_counter",   "printf",
    "future_event",
    // Other producers: repo's command and data-json.
    "command", "data-json"};

// Builds one line per call, in git's layout unless the input asks for a flaw.
class LineMaker {
 public:
  explicit LineMaker(fuzz::InputReader& in) : m_in(in) {}

  std::string make() {
    const std::string_view event = pick(k_event_names);
    // Region events are the interesting ones for pairing: more of them.
    const std::string_view kind = m_in.boolean() && m_in.boolean()
                                      ? (m_in.boolean() ? "region_enter" : "region_leave")
                                      : event;
    m_line = "{\"event\":";
    proto::append_json_quoted(m_line, kind);
    m_line += ",\"sid\":";
    proto::append_json_quoted(m_line, sids()[m_in.integer<std::size_t>(0, sids().size() - 1)]);
    if (const std::uint8_t thread = m_in.integer<std::uint8_t>(0, 7); thread < 7) {
      static const std::string k_threads[] = {"main", "main", "th01:preload_index", "th02:grep", "", "th03:\"q\"",
                                              std::string(300, 't')};
      key("thread");
      proto::append_json_quoted(m_line, k_threads[thread]);
    }
    time_field();
    if (m_in.integer(0, 7) != 0) {
      key("file");
      proto::append_json_quoted(m_line, m_in.boolean() ? "git.c" : "trace2/tr2_tgt_event.c");
      key("line");
      m_line += std::to_string(m_in.integer(0, 5000));
    }
    fields(kind);
    m_line += '}';
    flaw();
    return m_line;
  }

 private:
  template <typename T, std::size_t N>
  T pick(const T (&items)[N]) {
    return items[m_in.integer<std::size_t>(0, N - 1)];
  }

  void key(std::string_view name) {
    m_line += ",\"";
    m_line += name;
    m_line += "\":";
  }

  // One in 24 values has the wrong JSON type.
  bool wrong_type() {
    if (m_in.integer(0, 23) != 0) {
      return false;
    }
    static constexpr std::string_view k_wrong[] = {"\"oops\"", "[1,\"a\"]", "{\"x\":{}}", "null", "true",
                                                   "-0.5",     "1e400",     "18446744073709551616"};
    m_line += pick(k_wrong);
    return true;
  }

  void text(std::string_view name) {
    key(name);
    if (wrong_type()) {
      return;
    }
    if (m_in.integer(0, 7) == 0) {
      proto::append_json_quoted(m_line, m_in.bytes(40));
    } else {
      proto::append_json_quoted(m_line, words()[m_in.integer<std::size_t>(0, words().size() - 1)]);
    }
  }

  void integer(std::string_view name, int low, int high) {
    key(name);
    if (wrong_type()) {
      return;
    }
    if (m_in.integer(0, 15) == 0) {
      m_line += std::to_string(m_in.any<std::int64_t>());
    } else {
      m_line += std::to_string(m_in.integer(low, high));
    }
  }

  void seconds(std::string_view name) {
    key(name);
    if (wrong_type()) {
      return;
    }
    static constexpr std::string_view k_odd[] = {"1e308", "-0.000000", "0", "123456789012345678901234567890",
                                                 "1E-7", "-1.5"};
    if (m_in.integer(0, 15) == 0) {
      m_line += pick(k_odd);
      return;
    }
    const int micros = m_in.integer(0, 9999999);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%d.%06d", micros / 1000000, micros % 1000000);
    m_line += buffer;
  }

  void argv(std::string_view name) {
    key(name);
    if (wrong_type()) {
      return;
    }
    m_line += '[';
    const int n = m_in.integer(0, 4);
    for (int i = 0; i < n; ++i) {
      if (i > 0) {
        m_line += ',';
      }
      proto::append_json_quoted(m_line, i == 0 ? std::string("git")
                                               : words()[m_in.integer<std::size_t>(0, words().size() - 1)]);
    }
    m_line += ']';
  }

  void time_field() {
    switch (m_in.integer(0, 15)) {
      case 0: return;  // brief mode: no time
      case 1: key("time"); m_line += "\"2026-11-21T10:00:00Z\""; return;  // other producers' format
      case 2: key("time"); m_line += "\"yesterday\""; return;
      case 3: key("time"); m_line += "1795000000"; return;
      case 4: key("time"); m_line += "\"1969-12-31T23:59:59.000000Z\""; return;
      case 5: key("time"); m_line += "\"9999-12-31T23:59:59.999999Z\""; return;
      case 6: m_clock_us -= m_in.integer<std::int64_t>(0, 86400000000); break;  // clock steps back
      default: m_clock_us += m_in.integer<std::int64_t>(0, 5000); break;
    }
    key("time");
    m_line += '"';
    proto::append_utc_timestamp(m_line, m_clock_us);
    // Other producers' zones (docs/trace2-format.md): repo's "+00:00Z",
    // Git Credential Manager's 7 digits and "+00:00", any other offset.
    switch (m_in.integer(0, 7)) {
      case 0: m_line.insert(m_line.size() - 1, "+00:00"); break;
      case 1: m_line.insert(m_line.size() - 1, m_in.boolean() ? "7+00:00" : "+05:30"); m_line.pop_back(); break;
      case 2: m_line.replace(m_line.size() - 8, 8, m_in.boolean() ? "+00:00Z" : "-0430"); break;
      default: break;
    }
    m_line += '"';
  }

  void fields(std::string_view kind) {
    if (m_in.integer(0, 3) == 0) {
      integer("repo", 1, 3);
    }
    if (kind == "version") {
      text("evt");
      text("exe");
    } else if (kind == "start") {
      seconds("t_abs");
      argv("argv");
    } else if (kind == "exit" || kind == "atexit") {
      seconds("t_abs");
      integer("code", -1, 255);
    } else if (kind == "signal") {
      seconds("t_abs");
      integer("signo", 1, 15);
    } else if (kind == "error") {
      text("msg");
      text("fmt");
    } else if (kind == "cmd_path") {
      text("path");
    } else if (kind == "cmd_ancestry") {
      argv("ancestry");
    } else if (kind == "cmd_name") {
      text("name");
      text("hierarchy");
    } else if (kind == "cmd_mode") {
      text("name");
    } else if (kind == "alias") {
      text("alias");
      argv("argv");
    } else if (kind == "child_start") {
      integer("child_id", 0, 5);
      text("child_class");
      if (m_in.boolean()) {
        text("hook_name");
      }
      key("use_shell");
      if (!wrong_type()) {
        m_line += m_in.boolean() ? "true" : "false";
      }
      argv("argv");
    } else if (kind == "child_exit" || kind == "child_ready") {
      integer("child_id", 0, 5);
      integer("pid", -1, 70000);
      if (kind == "child_exit") {
        integer("code", -1, 255);
      } else {
        text("ready");
      }
      seconds("t_rel");
    } else if (kind == "thread_exit") {
      seconds("t_rel");
    } else if (kind == "exec") {
      integer("exec_id", 0, 3);
      text("exe");
      argv("argv");
    } else if (kind == "exec_result") {
      integer("exec_id", 0, 3);
      integer("code", -1, 255);
    } else if (kind == "def_param") {
      text("scope");
      text("param");
      text("value");
    } else if (kind == "def_repo") {
      text("worktree");
    } else if (kind == "region_enter" || kind == "region_leave") {
      integer("nesting", 1, 4);
      static const std::string k_labels[] = {"index", "refresh", "status", "index"};
      key("category");
      proto::append_json_quoted(m_line, k_labels[m_in.integer(0, 3)]);
      key("label");
      proto::append_json_quoted(m_line, k_labels[m_in.integer(0, 3)]);
      if (m_in.boolean()) {
        text("msg");
      }
      if (m_in.integer(0, 3) == 0) {
        seconds("t_abs");  // Git Credential Manager's
      }
      // Git Credential Manager's region_leave has no t_rel.
      if (kind == "region_leave" && m_in.integer(0, 3) != 0) {
        seconds("t_rel");
      }
    } else if (kind == "command") {
      text("name");
      argv("subcommands");
    } else if (kind == "data" || kind == "data_json" || kind == "data-json") {
      seconds("t_abs");
      seconds("t_rel");
      integer("nesting", 1, 4);
      text("category");
      text("key");
      if (kind == "data-json") {
        text("value");  // repo's: a string, maybe a list's repr
      } else if (kind == "data_json") {
        key("value");
        m_line += m_in.boolean() ? R"({"a":[1,2.5,"x",null,true],"b":{}})" : "[]";
      } else if (m_in.boolean()) {
        integer("value", 0, 100);
      } else {
        text("value");
      }
    } else if (kind == "timer" || kind == "th_timer") {
      text("category");
      text("name");
      integer("intervals", 0, 100);
      seconds("t_total");
      seconds("t_min");
      seconds("t_max");
    } else if (kind == "counter" || kind == "th_counter") {
      text("category");
      text("name");
      integer("count", 0, 100000);
    } else if (kind == "printf") {
      seconds("t_abs");
      text("msg");
    }
  }

  // One line in eight gets a flaw: another producer's layout, a duplicate
  // key, an unknown member, surrounding whitespace, or a cut (a reject).
  void flaw() {
    switch (m_in.integer(0, 47)) {
      case 0: {
        const std::size_t comma = m_line.find(',');
        m_line.insert(comma + 1, " ");
        return;
      }
      case 1: m_line.insert(m_line.size() - 1, ",\"code\":7,\"sid\":\"dup\""); return;
      case 2: m_line.insert(m_line.size() - 1, R"(,"extra":{"a":[1,2,{"b":null}],"c":"\u00e9\ud83d\ude00"})"); return;
      case 3: m_line = " \t" + m_line + " "; return;
      case 4: m_line.resize(m_in.integer<std::size_t>(0, m_line.size())); return;
      case 5: m_line += '\r'; return;
      default: return;
    }
  }

  fuzz::InputReader& m_in;
  std::string m_line;
  std::int64_t m_clock_us = 1795262400000000;  // 2026-11-21T12:00:00Z
};

using EventKey = std::pair<std::int64_t, std::int64_t>;  // (sessions.id, seq)

void check_database(db::Database& db, const std::map<EventKey, std::string>& committed) {
  check(db.query_text("PRAGMA integrity_check") == "ok", "integrity_check");
  check(db.query_int("SELECT count(*) FROM event_store") == static_cast<std::int64_t>(committed.size()),
        "every committed event stored, once: " + std::to_string(committed.size()) + " placed, " +
            std::to_string(db.query_int("SELECT count(*) FROM event_store").value_or(-1)) + " stored");
  db::Statement events = db.prepare("SELECT id, coalesce(raw, json), json_valid(json) FROM events");
  while (events.step()) {
    const std::int64_t id = events.column_int(0);
    const EventKey key{id >> 32, id & 0xffffffff};
    const auto found = committed.find(key);
    check(found != committed.end(), "stored event was placed: id " + std::to_string(id));
    check(events.column_blob(1) == found->second,
          "coalesce(raw, json) is the line sent: '" + found->second + "' came back as '" +
              std::string(events.column_blob(1)) + "'");
    check(events.column_int(2) == 1, "json is valid JSON: " + found->second);
  }
  const auto none = [&](const char* what, const std::string& sql) {
    const std::int64_t n = db.query_int(sql).value_or(-1);
    check(n == 0, std::string(what) + ": " + std::to_string(n) + " rows from " + sql);
  };
  none("event_count matches the stored events, numbered 0..n-1",
       "SELECT count(*) FROM sessions s WHERE event_count != (SELECT count(*) FROM event_store e WHERE e.session = s.id)"
       " OR event_count != coalesce((SELECT max(seq) + 1 FROM event_store e WHERE e.session = s.id), 0)");
  none("events belong to sessions",
       "SELECT count(*) FROM event_store e WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = e.session)");
  none("error_count counts error events",
       "SELECT count(*) FROM sessions s WHERE error_count != (SELECT count(*) FROM event_store e"
       " JOIN names n ON n.id = e.type WHERE e.session = s.id AND n.text = 'error')");
  none("problem_count counts problem rows",
       "SELECT count(*) FROM sessions s WHERE problem_count != (SELECT count(*) FROM problem_store p"
       " WHERE p.session = s.id)");
  none("problems belong to events",
       "SELECT count(*) FROM problem_store p WHERE NOT EXISTS (SELECT 1 FROM event_store e"
       " WHERE e.session = p.session AND e.seq = p.seq)");
  none("regions have existing parents",
       "SELECT count(*) FROM region_store r WHERE parent_seq IS NOT NULL AND NOT EXISTS"
       " (SELECT 1 FROM region_store p WHERE p.session = r.session AND p.seq = r.parent_seq)");
  none("regions start at a region event",
       "SELECT count(*) FROM region_store r WHERE NOT EXISTS (SELECT 1 FROM event_store e JOIN names n"
       " ON n.id = e.type WHERE e.session = r.session AND e.seq = r.seq"
       " AND n.text IN ('region_enter', 'region_leave'))");
  none("regions end at a region_leave",
       "SELECT count(*) FROM region_store r WHERE leave_seq IS NOT NULL AND NOT EXISTS"
       " (SELECT 1 FROM event_store e JOIN names n ON n.id = e.type WHERE e.session = r.session"
       " AND e.seq = r.leave_seq AND n.text = 'region_leave')");
  none("a region's parent started before it",
       "SELECT count(*) FROM region_store r WHERE parent_seq >= seq");
  none("children start at a child_start",
       "SELECT count(*) FROM child_store c WHERE start_seq IS NOT NULL AND NOT EXISTS"
       " (SELECT 1 FROM event_store e JOIN names n ON n.id = e.type WHERE e.session = c.session"
       " AND e.seq = c.start_seq AND n.text = 'child_start')");
  none("children end at a child_exit",
       "SELECT count(*) FROM child_store c WHERE end_seq IS NOT NULL AND NOT EXISTS"
       " (SELECT 1 FROM event_store e JOIN names n ON n.id = e.type WHERE e.session = c.session"
       " AND e.seq = c.end_seq AND n.text = 'child_exit')");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Workspace workspace;
  // TRACE2D_FUZZ_VERBOSE=1: print what an input does, to turn a crash into
  // a unit test (README.md).
  static const bool verbose = std::getenv("TRACE2D_FUZZ_VERBOSE") != nullptr;
  const auto say = [&](const std::string& what, std::uint64_t channel) {
    if (verbose) {
      std::fprintf(stderr, "%-14s channel %llu\n", what.c_str(), static_cast<unsigned long long>(channel));
    }
  };
  fuzz::InputReader in(data, size);
  LineMaker maker(in);
  const std::string& path = workspace.fresh();
  auto store = std::make_unique<Store>(path);

  std::map<EventKey, std::string> committed;
  std::map<EventKey, std::string> pending;
  std::int64_t now_us = 1795262400000000;
  constexpr int k_max_operations = 400;
  for (int op = 0; op < k_max_operations && in.remaining() > 0; ++op) {
    now_us += 1000;
    const auto channel = in.integer<std::uint64_t>(1, 4);
    // Channel 4 stands for the datagram socket: no connection that ends.
    const ingest::Origin origin{channel == 4 ? ingest::SourceKind::dgram : ingest::SourceKind::stream, channel,
                                1000 + static_cast<std::int64_t>(channel), 1000};
    // Mostly events; a restart is rare, as it costs as much as a hundred events.
    const int what = in.integer(0, 127);
    if (what < 4) {
      say("end_of_channel", channel);
      store->stitcher().end_of_channel(channel);
    } else if (what < 12) {
      say("commit", channel);
      store->commit();
      committed.merge(pending);
      check(pending.empty(), "a committed (session, seq) placed again");
    } else if (what < 14) {
      // Far in the future: every finished, committed session is evicted
      // and reloaded from the database when it speaks again.
      say("evict", channel);
      store->stitcher().evict(store->committed_batch(), now_us + 3600000000);
    } else if (what < 15) {
      say("expire_idle", channel);
      store->stitcher().expire_idle(now_us + 3600000000, std::chrono::milliseconds(1000));
    } else if (what < 16) {
      // SIGKILL: what was not committed is gone; trace2d restarts on the file.
      say("crash+restart", channel);
      pending.clear();
      store.reset();
      store = std::make_unique<Store>(path);
    } else {
      // Raw bytes (whatever the input holds) as a line, or a generated event.
      std::string line;
      if (what < 24) {
        line = in.bytes(200);
        std::erase(line, '\n');  // the framer never hands over a '\n'
      } else {
        line = maker.make();
      }
      say("line " + proto::json_quoted(line), channel);
      if (const auto placement = store->ingest(line, origin, now_us)) {
        pending.insert_or_assign(EventKey{placement->session, placement->seq}, std::move(line));
      }
    }
  }
  for (std::uint64_t channel = 1; channel <= 4; ++channel) {
    store->stitcher().end_of_channel(channel);
  }
  store->commit();
  committed.merge(pending);
  check(pending.empty(), "a committed (session, seq) placed again");
  check_database(store->db(), committed);
  fuzz::check_process_trees(store->db());
  // Every session ended, committed and forgotten: the memory charged to
  // their uids is all released, whatever was charged and released on the way.
  store->stitcher().expire_idle(now_us + 3600000000, std::chrono::milliseconds(1000));
  store->commit();
  store->stitcher().evict(store->committed_batch(), now_us + 7200000000);
  check(store->stitcher().live_sessions() == 0, "a session still in memory after every one ended");
  check(store->stitcher().live_bytes_total() == 0,
        "live bytes left charged: " + std::to_string(store->stitcher().live_bytes_total()));
  return 0;
}
