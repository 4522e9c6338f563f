// Growth benchmark: does ingest and querying stay flat as the database
// grows? A server keeps months of history, and every index grows with it.
//
// One database is filled in steps (empty, then each of --sizes events), and
// at each size trace2d ingests the short and the long shape of ingest_bench
// into it (events/s, zero loss checked), and the real trace2ctl runs `tree`,
// `stats`, `top`, `compare` and SQL on the `regions` view (wall time, as a
// user waits).
// Last, with retention's size bound set just under the file's size, trace2d
// ingests the short shape again and the file's size is sampled throughout:
// at full rate retention must keep it from growing and bring it within the
// bound.
//
//   growth_bench --trace2d build/release/bin/trace2d --trace2ctl build/release/bin/trace2ctl
//                [--sizes 10000000,50000000] [--short-events N] [--long-events N] [--runs N]
//
// The fill is not timed against a target: it runs trace2d's own Parser,
// Stitcher, EventEncoder and RowWriter in this process (no sockets), on the
// same traces, a copy per process with its own SID and times. History is
// laid out as a server would hold it: a steady volume a day (the largest
// size over --history-days, within retention's default 30 days), the
// newest day just before now, so `--since -1d` always selects one day's
// worth, whatever the size.

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/commit_poller.hpp"
#include "bench/support.hpp"
#include "bench/writers.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "daemon/store/event_encoder.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/row_writer.hpp"
#include "daemon/store/session_catalog_db.hpp"
#include "db/database_setup.hpp"
#include "db/sqlite.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"

namespace {

using namespace trace2d;
using bench::Clock;

constexpr std::int64_t k_us_per_day = 86'400'000'000;
constexpr std::size_t k_rows_per_commit = 50000;  // trace2d's largest transaction
constexpr std::size_t k_batch_rows = 8192;        // as trace2d's pipeline cuts batches
constexpr std::string_view k_time_key = "\"time\":\"";

struct Options {
  bench::PayloadOptions payload;  // traces and long trace; shape and size per step
  std::string trace2d = "build/release/bin/trace2d";
  std::string trace2ctl = "build/release/bin/trace2ctl";
  std::string work_dir;
  std::vector<std::int64_t> sizes = {10'000'000, 50'000'000};
  std::int64_t short_events = 500'000;
  std::int64_t long_events = 1'000'000;
  std::int64_t retention_events = 500'000;
  int runs = 3;
  double history_days = 25;
  bool retention = true;
  bool retention_only = false;
  std::string retention_headroom;  // --retention-headroom-percent for trace2d, if given
  double retention_under_percent = 1;  // the bound, this much under the file's size
};

// A captured process: its lines with "@SID@", and the `time` of each line
// as microseconds after the process's first one (-1: the line has none).
struct Template {
  std::vector<std::string> lines;
  std::vector<std::int64_t> offsets_us;
};

std::vector<Template> templates_of(const std::vector<bench::ProcessTrace>& traces) {
  std::vector<Template> out;
  for (const bench::ProcessTrace& trace : traces) {
    Template t;
    std::optional<std::int64_t> first;
    for (const std::string& line : trace.lines) {
      std::int64_t offset = -1;
      const auto at = line.find(k_time_key);
      if (at != std::string::npos) {
        if (const auto us = proto::parse_utc_timestamp(std::string_view(line).substr(at + k_time_key.size(), 27))) {
          first = first.value_or(*us);
          offset = *us - *first;
        }
      }
      t.lines.push_back(line);
      t.offsets_us.push_back(offset);
    }
    out.push_back(std::move(t));
  }
  return out;
}

// git's SID: the process's start time, "-H" and a host hash, "-P" and its pid.
std::string sid_at(std::int64_t start_us, std::uint64_t number) {
  std::string time = proto::format_utc_timestamp(start_us);  // 2026-11-21T10:00:00.000000Z
  std::erase(time, '-');
  std::erase(time, ':');
  char tail[48];
  std::snprintf(tail, sizeof tail, "-Hfill%04llx-P%08llx", static_cast<unsigned long long>(number >> 32),
                static_cast<unsigned long long>(number & 0xffffffffu));
  return time + tail;
}

// Fills the database with trace2d's own pipeline code, as the daemon would
// have stored the same processes, minus the sockets and queues.
class Filler {
 public:
  Filler(const Options& options, const std::string& db_path)
      : m_db_path(db_path),
        m_short(templates_of(bench::load_traces(options.payload.traces))),
        m_long(templates_of(bench::load_traces(options.payload.long_trace, 1000))) {}

  // Adds processes, alternating between the short traces and the long one
  // in proportion to their events (half the events each), from `from`
  // events stored until `to`. This step's event `i`, counted back from its
  // newest, is placed `i / per_day` days before `newest_us`.
  std::int64_t fill(std::int64_t from, std::int64_t to, double per_day, std::int64_t newest_us) {
    db::Database db = db::open_for_writing(m_db_path);
    store::NameTable names;
    names.load(db);
    store::DatabaseSessionCatalog catalog(m_db_path);
    stitch::Stitcher stitcher(catalog, catalog.next_session_id(), stitch::Stitcher::Options{});
    store::EventEncoder encoder(names);
    store::RowWriter rows(db);
    proto::Parser parser;
    proto::Event event;
    store::WriteBatch batch;
    std::int64_t rejects = 0;
    std::size_t in_transaction = 0;
    db.exec("BEGIN IMMEDIATE");
    const auto hand_on = [&](bool commit) {
      stitch::StitchChanges changes;
      stitcher.collect_changes(changes, m_batch_number);
      encoder.encode(changes, batch);
      if (!batch.empty()) {
        batch.number = m_batch_number++;
        in_transaction += batch.row_count();
        rows.write(batch);
        batch = store::WriteBatch();
      }
      if (commit || in_transaction >= k_rows_per_commit) {
        db.exec("COMMIT");
        stitcher.evict(m_batch_number - 1, proto::unix_now_us());
        db.exec("BEGIN IMMEDIATE");
        in_transaction = 0;
      }
    };
    // Newest first in the counting, but written oldest first within this
    // step, so that ids follow time as in a daemon's database.
    std::int64_t done = 0;
    std::int64_t short_events = 0;
    std::int64_t long_events = 0;
    std::string line;
    while (from + done < to) {
      const bool long_turn = long_events < short_events;
      const Template& trace = long_turn ? m_long[m_next_long++ % m_long.size()] : m_short[m_next_short++ % m_short.size()];
      const auto n = static_cast<std::int64_t>(trace.lines.size());
      (long_turn ? long_events : short_events) += n;
      const std::int64_t back = (to - from) - done;  // counted from this step's newest event
      const std::int64_t start_us =
          newest_us - static_cast<std::int64_t>(static_cast<double>(back) / per_day * static_cast<double>(k_us_per_day));
      const std::string sid = sid_at(start_us, m_sessions++);
      const ingest::Origin origin{ingest::SourceKind::stream, ++m_channel, ::getpid(), ::getuid()};
      for (std::size_t k = 0; k < trace.lines.size(); ++k) {
        line = trace.lines[k];
        line.replace(line.find("@SID@"), 5, sid);
        const std::int64_t at_us = start_us + std::max<std::int64_t>(trace.offsets_us[k], 0);
        if (trace.offsets_us[k] >= 0) {
          bench::stamp_time(line, at_us);
        }
        const std::string_view text(line.data(), line.size() - 1);  // without '\n'
        if (!parser.parse(text, 0, event)) {
          ++rejects;
          continue;
        }
        const auto placement = stitcher.place(event, origin, at_us);
        if (!placement) {
          ++rejects;
          continue;
        }
        encoder.encode(event, text, *placement, batch);
        if (batch.events.size() >= k_batch_rows) {
          hand_on(false);
        }
      }
      stitcher.end_of_channel(origin.channel);
      done += n;
    }
    hand_on(true);
    db.exec("COMMIT");
    if (rejects > 0) {
      throw std::runtime_error("the fill had " + std::to_string(rejects) + " rejected lines");
    }
    return done;
  }

 private:
  std::string m_db_path;
  std::vector<Template> m_short;
  std::vector<Template> m_long;
  std::size_t m_next_short = 0;
  std::size_t m_next_long = 0;
  std::uint64_t m_sessions = 0;
  std::uint64_t m_channel = 0;
  std::uint64_t m_batch_number = 1;
};

std::int64_t query(const std::string& db_path, const std::string& sql) {
  db::Database db(db_path, db::OpenMode::read_only);
  db.set_busy_timeout(5000);
  return db.query_int(sql).value_or(-1);
}

std::string query_text(const std::string& db_path, const std::string& sql) {
  db::Database db(db_path, db::OpenMode::read_only);
  return db.query_text(sql).value_or("");
}

// What the database holds of a run's checks. `rejects` rows accumulate (the
// difference over a run is that run's); `source_stats` holds the counters
// of the daemon's latest run.
struct Counts {
  std::int64_t rejects = 0;
  std::int64_t dropped_lines = 0;
  std::int64_t kernel_drops = 0;
  static Counts read(const std::string& db_path) {
    db::Database db(db_path, db::OpenMode::read_only);
    db.set_busy_timeout(5000);
    return Counts{db.query_int("SELECT count(*) FROM rejects").value_or(-1),
                  db.query_int("SELECT coalesce(sum(dropped_lines), 0) FROM source_stats").value_or(-1),
                  db.query_int("SELECT coalesce(sum(kernel_drops), 0) FROM source_stats").value_or(-1)};
  }
};

std::int64_t file_bytes(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : 0;
}

struct IngestResult {
  double events_per_s = 0;
  std::int64_t sessions = 0;
  bool lossless = false;
  std::map<std::string, double> thread_cpu_s;  // by thread name, at the end of the run
};

// Sends one payload into a running trace2d and waits for all of it to be
// committed; prints one INGEST line.
IngestResult ingest_into(const Options& options, const std::string& work, const std::string& label,
                    const std::string& shape, std::int64_t events, const std::string& sid_host,
                    const std::vector<std::string>& daemon_args, const std::function<void()>& while_running = {},
                    const std::function<void()>& before_sending = {},
                    std::chrono::seconds timeout = std::chrono::seconds(60)) {
  bench::PayloadOptions payload_options = options.payload;
  payload_options.shape = shape;
  payload_options.events = events;
  payload_options.sid_host = sid_host;
  bench::Payload payload = bench::make_payload(payload_options);
  const std::string db_path = bench::database_in(work);
  const std::int64_t first_id = query(db_path, "SELECT coalesce(max(id), 0) + 1 FROM sessions");
  const Counts before = Counts::read(db_path);

  bench::Child daemon = bench::start_trace2d(options.trace2d, work, daemon_args);
  if (before_sending) {
    before_sending();
  }
  bench::CommitPoller poller(db_path, payload.events_by_sid(), false, first_id);
  const auto start = Clock::now();
  bench::WriteStats stats;
  std::thread writers([&] { stats = bench::run_stream_writers(payload, bench::stream_socket_in(work)); });
  std::atomic<bool> stop{false};
  std::thread sampler;
  if (while_running) {
    sampler = std::thread([&] {
      while (!stop) {
        while_running();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  Clock::time_point done;
  const bool complete =
      poller.wait_for(payload.events, std::chrono::microseconds(1000), timeout, done);
  writers.join();
  const std::int64_t peak_kib = bench::proc_status_kib(daemon.pid(), "VmHWM");
  std::map<std::string, double> thread_cpu = bench::thread_cpu_seconds(daemon.pid());
  const int code = daemon.terminate();
  stop = true;
  if (sampler.joinable()) {
    sampler.join();
  }
  const std::string first = std::to_string(first_id);
  const std::int64_t stored = query(db_path, "SELECT count(*) FROM event_store WHERE session >= " + first);
  const std::int64_t sessions = query(db_path, "SELECT count(*) FROM sessions WHERE id >= " + first);
  const Counts after = Counts::read(db_path);
  const double elapsed = bench::seconds_between(start, done);
  IngestResult result;
  result.events_per_s = static_cast<double>(payload.events) / elapsed;
  result.sessions = payload.sessions;
  result.thread_cpu_s = std::move(thread_cpu);
  result.lossless = complete && code == 0 && stored == payload.events && sessions == payload.sessions &&
                    after.rejects == before.rejects && after.dropped_lines == 0 && after.kernel_drops == 0 &&
                    stats.failed_writes == 0;
  std::printf(
      "INGEST %s shape=%s events=%lld sessions=%lld elapsed_s=%.3f events_per_s=%.0f peak_rss_mib=%.1f "
      "stored=%lld stored_sessions=%lld rejects=%lld dropped_lines=%lld kernel_drops=%lld exit=%d loss=%s\n",
      label.c_str(), shape.c_str(), static_cast<long long>(payload.events),
      static_cast<long long>(payload.sessions), elapsed, result.events_per_s,
      static_cast<double>(peak_kib) / 1024.0, static_cast<long long>(stored), static_cast<long long>(sessions),
      static_cast<long long>(after.rejects - before.rejects),
      static_cast<long long>(after.dropped_lines), static_cast<long long>(after.kernel_drops), code, result.lossless ? "none" : "YES");
  std::fflush(stdout);
  if (!result.lossless) {
    std::ifstream log(work + "/trace2d.log");
    std::stringstream text;
    text << log.rdbuf();
    std::fprintf(stderr, "growth_bench: loss at %s %s; trace2d log:\n%s\n", label.c_str(), shape.c_str(),
                 text.str().c_str());
  }
  return result;
}

// Wall time of one trace2ctl command, spawn to exit, its output to /dev/null.
double time_ctl(const std::vector<std::string>& argv) {
  const auto start = Clock::now();
  bench::Child child(argv, "/dev/null", "");
  const int code = child.wait();
  const double ms = bench::seconds_between(start, Clock::now()) * 1000;
  if (code != 0) {
    std::string command;
    for (const std::string& a : argv) {
      command += a + " ";
    }
    throw std::runtime_error("exit " + std::to_string(code) + ": " + command);
  }
  return ms;
}

void run_queries(const Options& options, const std::string& db_path, const std::string& label) {
  // A `git fetch` in the middle of the history, as a user looks one up.
  const std::string root = query_text(
      db_path,
      "SELECT sid FROM sessions WHERE id >= (SELECT max(id) / 2 FROM sessions) AND cmd_name = 'fetch' "
      "ORDER BY id LIMIT 1");
  const std::string day_ago = proto::format_utc_timestamp(proto::unix_now_us() - k_us_per_day);
  const std::vector<std::string> ctl{options.trace2ctl, "--db", db_path};
  struct Query {
    std::string name;
    std::vector<std::string> args;
  };
  std::vector<Query> queries{
      {"stats-1d", {"stats", "--since", "-1d"}},
      {"top-1d", {"top", "--since", "-1d"}},
      {"top", {"top"}},
      {"regions-1d",
       {"sql",
        "SELECT r.category, r.label, count(*) AS n, round(avg(r.elapsed) * 1000, 3) AS avg_ms FROM regions r "
        "JOIN sessions s ON s.sid = r.sid WHERE s.start_time >= '" + day_ago +
            "' GROUP BY 1, 2 ORDER BY n DESC LIMIT 20"}},
      // What got slower: the last 7 days against the 28 before (all of the
      // history), per command; then also every command's regions and
      // children, a lookup per run; then one command's.
      {"compare", {"compare"}},
      {"compare-regions-all", {"compare", "--regions", "all"}},
      {"compare-status", {"compare", "--cmd", "status"}},
      // docs/schema.md's example: all history, no time bound.
      {"regions-status",
       {"sql",
        "SELECT r.category, r.label, max(r.elapsed) AS slowest FROM regions r JOIN sessions s USING (sid) "
        "WHERE s.cmd_name = 'status' GROUP BY 1, 2 ORDER BY slowest DESC LIMIT 10"}},
  };
  if (!root.empty()) {
    queries.insert(queries.begin(), {"tree", {"tree", root}});
    queries.push_back({"regions-sid", {"sql", "SELECT * FROM regions WHERE sid = '" + root + "'"}});
  }
  for (const Query& q : queries) {
    std::vector<std::string> argv = ctl;
    argv.insert(argv.end(), q.args.begin(), q.args.end());
    time_ctl(argv);  // warm-up: the page cache, as for a user asking twice
    for (int run = 1; run <= options.runs; ++run) {
      std::printf("QUERY %s query=%s run=%d ms=%.1f\n", label.c_str(), q.name.c_str(), run, time_ctl(argv));
    }
    std::fflush(stdout);
  }
}

// The file just over retention's size bound, then the short shape at full
// rate: the file's size is sampled every 5 ms throughout.
bool run_retention(const Options& options, const std::string& work, std::int64_t size) {
  const std::string db_path = bench::database_in(work);
  {
    db::Database db(db_path, db::OpenMode::read_write_create);
    db::Statement checkpoint = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)");
    while (checkpoint.step()) {
    }
  }
  // A little under the file's size: retention looks at once (later only
  // every 5 s while it finds nothing to do), and must keep the file from
  // growing from the first batch on.
  const std::int64_t start_bytes = file_bytes(db_path);
  const auto cap = static_cast<std::int64_t>(static_cast<double>(start_bytes) * (1 - options.retention_under_percent / 100));
  const std::int64_t sessions_before = query(db_path, "SELECT count(*) FROM sessions");
  std::atomic<std::int64_t> peak_file{0};
  std::atomic<std::int64_t> peak_wal{0};
  std::atomic<std::int64_t> peak_sum{0};
  const auto sample = [&] {
    const std::int64_t main = file_bytes(db_path);
    const std::int64_t wal = file_bytes(db_path + "-wal");
    peak_file = std::max(peak_file.load(), main);
    peak_wal = std::max(peak_wal.load(), wal);
    peak_sum = std::max(peak_sum.load(), main + wal);
  };
  // The burst comes once retention is done with what it does while ingest
  // is quiet (pages in use steady for half a second): it finds the
  // database kept at its bound, as a daemon that has been running holds it.
  double settle_s = 0;
  std::int64_t burst_used = 0;
  const auto settle = [&] {
    const auto start = Clock::now();
    db::Database db(db_path, db::OpenMode::read_only);
    db.set_busy_timeout(5000);
    const auto used = [&] {
      return (db.query_int("PRAGMA page_count").value_or(0) - db.query_int("PRAGMA freelist_count").value_or(0)) *
             db.query_int("PRAGMA page_size").value_or(4096);
    };
    std::int64_t last = used();
    int steady = 0;
    while (steady < 5 && Clock::now() - start < std::chrono::seconds(180)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const std::int64_t now = used();
      steady = now == last && now <= cap ? steady + 1 : 0;
      last = now;
    }
    settle_s = bench::seconds_between(start, Clock::now());
    burst_used = last;
  };
  const std::string label = "size=" + std::to_string(size);
  std::vector<std::string> args{"--retention-max-db-bytes", std::to_string(cap)};
  if (!options.retention_headroom.empty()) {
    args.insert(args.end(), {"--retention-headroom-percent", options.retention_headroom});
  }
  const IngestResult result = ingest_into(options, work, label + " phase=retention", "short", options.retention_events,
                                     "ret", args, sample, settle,
                                     // All is committed seconds after the burst; a
                                     // run that lost lines need not wait a minute.
                                     std::chrono::seconds(20));
  sample();
  const std::int64_t after = file_bytes(db_path);
  // Before, plus the run's own sessions (all kept: the oldest go first), minus after.
  const std::int64_t deleted = sessions_before + result.sessions - query(db_path, "SELECT count(*) FROM sessions");
  const auto cpu_of = [&](const char* name) {
    const auto it = result.thread_cpu_s.find(name);
    return it == result.thread_cpu_s.end() ? 0.0 : it->second;
  };
  std::printf(
      "RETENTION %s start_file_bytes=%lld cap_bytes=%lld peak_file_bytes=%lld peak_wal_bytes=%lld "
      "peak_file_over_start=%.4f final_file_bytes=%lld final_file_over_cap=%.4f sessions_deleted=%lld "
      "events_per_s=%.0f settle_s=%.1f burst_used_over_cap=%.4f store_cpu_s=%.2f parse_cpu_s=%.2f loss=%s\n",
      label.c_str(), static_cast<long long>(start_bytes), static_cast<long long>(cap),
      static_cast<long long>(peak_file.load()), static_cast<long long>(peak_wal.load()),
      static_cast<double>(peak_file.load()) / static_cast<double>(start_bytes), static_cast<long long>(after),
      static_cast<double>(after) / static_cast<double>(cap), static_cast<long long>(deleted), result.events_per_s,
      settle_s, static_cast<double>(burst_used) / static_cast<double>(cap), cpu_of("trace2d-store"),
      cpu_of("trace2d-parse"), result.lossless ? "none" : "YES");
  return result.lossless;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App cli{"Ingest and trace2ctl queries into a database of growing size (empty, then each of --sizes)."};
  cli.add_option("--trace2d", options.trace2d, "trace2d binary")->capture_default_str();
  cli.add_option("--trace2ctl", options.trace2ctl, "trace2ctl binary")->capture_default_str();
  cli.add_option("--traces", options.payload.traces, "Directory of captured .jsonl traces")->capture_default_str();
  cli.add_option("--long-trace", options.payload.long_trace, "The long process's trace")->capture_default_str();
  cli.add_option("--work-dir", options.work_dir, "Where the database goes (default: a fresh temp dir, removed)");
  cli.add_option("--sizes", options.sizes, "Events in the database at each step after the empty one")
      ->delimiter(',')
      ->capture_default_str();
  cli.add_option("--short-events", options.short_events, "Events of the short shape per ingest run")
      ->capture_default_str();
  cli.add_option("--long-events", options.long_events, "Events of the long shape per ingest run")
      ->capture_default_str();
  cli.add_option("--retention-events", options.retention_events,
                 "Events of the short shape sent at retention's bound (long enough for several of its steps)")
      ->capture_default_str();
  cli.add_option("--runs", options.runs, "Ingest runs of each shape, and timed runs of each query, per size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cli.add_option("--history-days", options.history_days,
                 "Days the largest size spans (trace2d's default retention keeps 30)")
      ->check(CLI::Range(0.01, 29.0))
      ->capture_default_str();
  cli.add_flag("!--no-retention", options.retention, "Skip the retention phase at the largest size");
  cli.add_flag("--retention-only", options.retention_only,
               "Only the retention phase, on the database already in --work-dir (a copy of an earlier run's: "
               "the phase deletes from it), labelled with the events it holds");
  cli.add_option("--retention-under", options.retention_under_percent,
                 "Percent of the file's size the retention phase's bound is set under (negative: over)")
      ->capture_default_str();
  cli.add_option("--retention-headroom", options.retention_headroom,
                 "trace2d's --retention-headroom-percent in the retention phase (default: trace2d's)");
  CLI11_PARSE(cli, argc, argv);
  try {
    bench::raise_fd_limit();
    std::sort(options.sizes.begin(), options.sizes.end());
    std::vector<std::int64_t> sizes{0};
    sizes.insert(sizes.end(), options.sizes.begin(), options.sizes.end());
    bench::WorkDir work(options.work_dir);
    const std::string db_path = bench::database_in(work.path());
    if (options.retention_only) {
      if (options.work_dir.empty() || !std::filesystem::exists(db_path)) {
        throw std::runtime_error("--retention-only needs --work-dir holding a filled database (" + db_path + ")");
      }
      return run_retention(options, work.path(),
                           query(db_path, "SELECT coalesce(sum(event_count), 0) FROM sessions"))
                 ? 0
                 : 1;
    }
    (void)db::open_for_writing(db_path);  // trace2d's schema, before the fill reads it
    Filler filler(options, db_path);
    const double per_day = static_cast<double>(std::max<std::int64_t>(sizes.back(), 1)) / options.history_days;
    // Just before now, so the fill's newest day is inside `--since -1d`.
    const std::int64_t newest_us = proto::unix_now_us() - 60'000'000;
    std::int64_t filled = 0;
    bool ok = true;
    for (std::size_t step = 0; step < sizes.size(); ++step) {
      const std::int64_t size = sizes[step];
      if (size > filled) {
        const auto start = Clock::now();
        // Each step reaches further back in time: the events of the earlier
        // steps stay the newest.
        const std::int64_t added = filler.fill(filled, size, per_day, newest_us - static_cast<std::int64_t>(
            static_cast<double>(filled) / per_day * static_cast<double>(k_us_per_day)));
        const double seconds = bench::seconds_between(start, Clock::now());
        filled += added;
        std::printf("FILL size=%lld added=%lld seconds=%.1f events_per_s=%.0f db_bytes=%lld\n",
                    static_cast<long long>(size), static_cast<long long>(added), seconds,
                    static_cast<double>(added) / seconds, static_cast<long long>(file_bytes(db_path)));
        std::fflush(stdout);
      }
      const std::string label = "size=" + std::to_string(size);
      for (int run = 1; run <= options.runs; ++run) {
        for (const std::string shape : {"short", "long"}) {
          const std::string host = "g" + std::to_string(step) + shape.substr(0, 1) + std::to_string(run);
          ok = ingest_into(options, work.path(), label + " run=" + std::to_string(run), shape,
                      shape == "short" ? options.short_events : options.long_events, host, {})
                   .lossless &&
               ok;
        }
      }
      std::printf("SIZE %s events=%lld sessions=%lld db_bytes=%lld\n", label.c_str(),
                  static_cast<long long>(query(db_path, "SELECT coalesce(sum(event_count), 0) FROM sessions")),
                  static_cast<long long>(query(db_path, "SELECT count(*) FROM sessions")),
                  static_cast<long long>(file_bytes(db_path)));
      run_queries(options, db_path, label);
    }
    if (options.retention) {
      ok = run_retention(options, work.path(), sizes.back()) && ok;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "growth_bench: %s\n", e.what());
    return 1;
  }
}
