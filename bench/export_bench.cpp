// Export benchmark (issue 12): how fast trace2d's OTLP exporter empties a
// backlog, in spans per second, into a loopback receiver that discards
// (otlp_sink), and what building spans costs as process trees grow.
//
//   export_bench --trace2d build/release/bin/trace2d --traces tests/data/traces
//                [--events 300000] [--protocol http|grpc] [--daemon-arg FLAG]...
//     Imports copies of the real git traces (fetch with its children, clone,
//     hooks, aliases...) into a database, queues every session, starts
//     otlp_sink (OTLP/HTTP) or otlp_grpc_sink (--protocol grpc: trace2d
//     --otlp-protocol grpc) and trace2d --otlp-endpoint on it, and measures
//     from trace2d's start until the queue is empty:
//     RESULT bench=export protocol=P sessions=N spans=N requests=N bytes=N elapsed_s=S spans_per_s=N loss=none
//
//   export_bench --tree N [--loader both|export|whole]
//     One git process with N child gits (a rebase -x of N commits), all
//     queued; builds their spans in the exporter's rounds of 256 sessions,
//     in this process, with the exporter's loader (its sessions and the rows
//     that place them) and with a load of the whole tree per round (the
//     exporter before schema v11), and prints the seconds each took:
//     TREE sessions=N loader=export seconds=S spans=N
//
// Exits 1 when sessions are left in the queue or spans are missing.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/support.hpp"
#include "db/read_transaction.hpp"
#include "db/sqlite.hpp"
#include "model/process_tree.hpp"
#include "model/tree_loader.hpp"
#include "otlp/span_builder.hpp"

namespace {

using namespace trace2d;
using namespace trace2d::bench;
namespace fs = std::filesystem;

struct Options {
  std::string trace2d = "build/release/bin/trace2d";
  std::string sink;
  std::string grpc_sink;
  std::string protocol = "http";
  std::string traces = "tests/data/traces";
  std::string work_dir;
  std::int64_t events = 300'000;
  std::vector<std::string> daemon_args;
  int tree = 0;
  std::string loader = "both";
};

constexpr std::size_t k_round = 256;  // the exporter's sessions per request

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void run_checked(const std::vector<std::string>& argv, const std::string& log) {
  Child child(argv, log, log);
  if (child.wait() != 0) {
    throw std::runtime_error(argv.front() + " failed: " + read_file(log));
  }
}

// Every session queued, as the daemon's trigger queues what it receives
// (imported sessions it does not: the benchmark queues them itself).
void queue_all(const std::string& db_path) {
  db::Database db(db_path, db::OpenMode::read_write_create);
  db.exec(
      "INSERT OR IGNORE INTO otlp_pending (session_id, queued, uid)"
      " SELECT id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), coalesce(peer_uid, -1) FROM sessions");
}

int run_daemon(const Options& options, const std::string& work) {
  const std::string db_path = database_in(work);
  (void)write_trace_copies(options.traces, work + "/traces", options.events);
  run_checked({options.trace2d, "--config", "", "import", "--db", db_path, work + "/traces"}, work + "/import.log");
  queue_all(db_path);
  std::int64_t sessions = 0;
  {
    db::Database db(db_path, db::OpenMode::read_only);
    sessions = db.query_int("SELECT count(*) FROM otlp_pending").value_or(0);
  }

  const bool grpc = options.protocol == "grpc";
  Child sink({grpc ? options.grpc_sink : options.sink}, work + "/sink.out", work + "/sink.err");
  std::string port;
  const auto ready_by = Clock::now() + std::chrono::seconds(10);
  while (port.empty() && Clock::now() < ready_by) {
    const std::string out = read_file(work + "/sink.out");
    if (const auto at = out.find("port="); at != std::string::npos && out.find('\n', at) != std::string::npos) {
      port = out.substr(at + 5, out.find('\n', at) - at - 5);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (port.empty()) {
    throw std::runtime_error("otlp_sink did not start: " + read_file(work + "/sink.err"));
  }
  // The backlog was imported a moment ago; one left by an outage is long
  // quiet. Settling (otlp.settle_ms) only delays a session, it costs no
  // work, so it is off here: the time is the export's.
  std::vector<std::string> args = {"--otlp-endpoint", "http://127.0.0.1:" + port, "--otlp-settle-ms", "0"};
  if (grpc) {
    args.insert(args.end(), {"--otlp-protocol", "grpc"});
  }
  args.insert(args.end(), options.daemon_args.begin(), options.daemon_args.end());
  const auto start = Clock::now();
  Child daemon = start_trace2d(options.trace2d, work, args);
  db::Database db(db_path, db::OpenMode::read_only);
  db.set_busy_timeout(10000);
  std::int64_t left = sessions;
  auto done = Clock::now();
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  while (left > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    left = db.query_int("SELECT count(*) FROM otlp_pending").value_or(sessions);
    done = Clock::now();
  }
  const double elapsed = seconds_between(start, done);
  // What the export cost, whatever else the machine was doing meanwhile:
  // its two threads, the delivering one and the loading one.
  const std::map<std::string, double> threads = thread_cpu_seconds(daemon.pid());
  const auto cpu_of = [&threads](const std::string& name) {
    const auto found = threads.find(name);
    return found == threads.end() ? 0.0 : found->second;
  };
  const double deliver_cpu = cpu_of("trace2d-otlp");
  const double load_cpu = cpu_of("t2d-otlp-load");
  const double cpu = deliver_cpu + load_cpu;
  const int code = daemon.terminate();
  sink.terminate();
  const std::int64_t spans = db.query_int("SELECT exported_spans FROM otlp_export").value_or(0);
  const std::int64_t exported = db.query_int("SELECT exported_sessions FROM otlp_export").value_or(0);
  const std::int64_t failures = db.query_int("SELECT failures + dropped_sessions FROM otlp_export").value_or(0);
  const std::string sunk = read_file(work + "/sink.out");
  const auto number = [&](const std::string& key) {
    const auto at = sunk.find(key + "=");
    return at == std::string::npos ? -1LL : std::atoll(sunk.c_str() + at + key.size() + 1);
  };
  const bool lossless = left == 0 && code == 0 && failures == 0 && spans > 0;
  std::printf(
      "RESULT bench=export protocol=%s sessions=%lld exported_sessions=%lld spans=%lld requests=%lld bytes=%lld "
      "elapsed_s=%.3f spans_per_s=%.0f exporter_cpu_s=%.3f deliver_cpu_s=%.3f load_cpu_s=%.3f spans_per_cpu_s=%.0f "
      "spans_per_busier_thread_cpu_s=%.0f left=%lld failures=%lld exit=%d loss=%s\n",
      options.protocol.c_str(), static_cast<long long>(sessions), static_cast<long long>(exported),
      static_cast<long long>(spans), number("requests"), number("bytes"), elapsed, static_cast<double>(spans) / elapsed,
      cpu, deliver_cpu, load_cpu, cpu > 0 ? static_cast<double>(spans) / cpu : 0.0,
      cpu > 0 ? static_cast<double>(spans) / std::max(deliver_cpu, load_cpu) : 0.0, static_cast<long long>(left),
      static_cast<long long>(failures), code, lossless ? "none" : "YES");
  if (!lossless) {
    std::fprintf(stderr, "export_bench: sessions left or failures; trace2d log:\n%s\n",
                 read_file(work + "/trace2d.log").c_str());
  }
  return lossless ? 0 : 1;
}

// One git process running `children` child gits, one after the other, each
// with a few regions: the trace file `trace2d import` reads.
void write_tree(const std::string& path, int children) {
  std::ofstream out(path, std::ios::binary);
  const std::string root = "20261124T000000.000000Z-H0000beef-P00001000";
  std::int64_t us = 0;
  const auto time = [&] {
    char text[40];
    std::snprintf(text, sizeof text, "2026-11-24T00:%02lld:%02lld.%06lldZ", static_cast<long long>(us / 60'000'000 % 60),
                  static_cast<long long>(us / 1'000'000 % 60), static_cast<long long>(us % 1'000'000));
    us += 50;
    return std::string(text);
  };
  const auto common = [&](const std::string& sid, const std::string& event) {
    return "{\"event\":\"" + event + "\",\"sid\":\"" + sid + "\",\"thread\":\"main\",\"time\":\"" + time() +
           "\",\"file\":\"git.c\",\"line\":1";
  };
  out << common(root, "version") << ",\"evt\":\"4\",\"exe\":\"2.47.3\"}\n";
  out << common(root, "start") << ",\"t_abs\":0.001,\"argv\":[\"git\",\"rebase\",\"-x\",\"true\"]}\n";
  out << common(root, "cmd_name") << ",\"name\":\"rebase\",\"hierarchy\":\"rebase\"}\n";
  for (int i = 0; i < children; ++i) {
    char pid[16];
    std::snprintf(pid, sizeof pid, "P%08x", 0x2000 + i);
    const std::string child = root + "/20261124T000000.000000Z-H0000beef-" + pid;
    out << common(root, "region_enter") << ",\"nesting\":1,\"category\":\"rebase\",\"label\":\"pick\"}\n";
    out << common(root, "child_start") << ",\"child_id\":" << i << ",\"child_class\":\"git\",\"use_shell\":false,"
        << "\"argv\":[\"git\",\"commit\"]}\n";
    out << common(child, "version") << ",\"evt\":\"4\",\"exe\":\"2.47.3\"}\n";
    out << common(child, "start") << ",\"t_abs\":0.001,\"argv\":[\"git\",\"commit\"]}\n";
    out << common(child, "cmd_name") << ",\"name\":\"commit\",\"hierarchy\":\"rebase/commit\"}\n";
    for (const char* label : {"read-index", "write-tree", "update-ref"}) {
      out << common(child, "region_enter") << ",\"nesting\":1,\"category\":\"commit\",\"label\":\"" << label
          << "\"}\n";
      out << common(child, "region_leave") << ",\"t_rel\":0.0001,\"nesting\":1,\"category\":\"commit\",\"label\":\""
          << label << "\"}\n";
    }
    out << common(child, "exit") << ",\"t_abs\":0.002,\"code\":0}\n";
    out << common(child, "atexit") << ",\"t_abs\":0.002,\"code\":0}\n";
    out << common(root, "child_exit") << ",\"child_id\":" << i << ",\"pid\":" << (0x2000 + i)
        << ",\"code\":0,\"t_rel\":0.003}\n";
    out << common(root, "region_leave") << ",\"t_rel\":0.004,\"nesting\":1,\"category\":\"rebase\",\"label\":\"pick\"}\n";
  }
  out << common(root, "exit") << ",\"t_abs\":1.0,\"code\":0}\n";
  out << common(root, "atexit") << ",\"t_abs\":1.0,\"code\":0}\n";
}

// Builds every queued session's spans in rounds, as the exporter does; the
// seconds it took and the spans built.
std::pair<double, std::size_t> build_rounds(db::Database& db, const std::vector<std::string>& sids,
                                            const std::map<std::string, std::int64_t>& ids, bool whole) {
  model::LoadOptions load;
  load.errors = true;
  load.params = true;
  load.annotations = true;
  std::size_t spans = 0;
  const auto start = Clock::now();
  for (std::size_t from = 0; from < sids.size(); from += k_round) {
    const std::vector<std::string> round(sids.begin() + static_cast<std::ptrdiff_t>(from),
                                         sids.begin() + static_cast<std::ptrdiff_t>(std::min(sids.size(), from + k_round)));
    const std::string root = round.front().substr(0, round.front().find('/'));
    std::vector<model::ProcessRows> rows;
    {
      const db::ReadTransaction snapshot(db);
      if (whole) {
        rows = model::load_process_rows(db, root, load);
      } else {
        std::vector<model::ExportSession> sessions;
        // One owner's tree: the importer's (the trace file's owner).
        const model::Owner owner{db.query_int("SELECT peer_uid FROM sessions WHERE sid = '" + round.front() + "'")};
        for (const std::string& sid : round) {
          sessions.push_back({sid, root, owner, std::nullopt, 0});
        }
        rows = std::move(model::load_export_rows(db, sessions, load).front().rows);
      }
    }
    const model::ProcessTree tree = model::build_process_tree(root, std::move(rows));
    // One walk per round, as the exporter builds a tree's sessions.
    std::set<std::int64_t> wanted;
    for (const std::string& sid : round) {
      wanted.insert(ids.at(sid));
    }
    std::vector<otlp::Span> built;
    otlp::append_spans(tree, built, [&wanted](const model::ProcessInfo& p) { return wanted.contains(p.session_id); });
    spans += built.size();
  }
  return {seconds_between(start, Clock::now()), spans};
}

int run_tree(const Options& options, const std::string& work) {
  const std::string db_path = database_in(work);
  write_tree(work + "/tree.jsonl", options.tree);
  run_checked({options.trace2d, "--config", "", "import", "--db", db_path, work + "/tree.jsonl"}, work + "/import.log");
  db::Database db(db_path, db::OpenMode::read_only);
  std::vector<std::string> sids;
  std::map<std::string, std::int64_t> ids;
  db::Statement select = db.prepare("SELECT sid, id FROM sessions ORDER BY id");
  while (select.step()) {
    sids.emplace_back(select.column_text(0));
    ids.emplace(sids.back(), select.column_int(1));
  }
  if (static_cast<int>(sids.size()) != options.tree + 1) {
    throw std::runtime_error("the tree has " + std::to_string(sids.size()) + " sessions, not " +
                             std::to_string(options.tree + 1));
  }
  std::size_t expected = 0;
  bool ok = true;
  for (const bool whole : {false, true}) {
    if (options.loader != "both" && (options.loader == "whole") != whole) {
      continue;
    }
    const auto [seconds, spans] = build_rounds(db, sids, ids, whole);
    std::printf("TREE sessions=%zu loader=%s seconds=%.3f spans=%zu spans_per_s=%.0f\n", sids.size(),
                whole ? "whole" : "export", seconds, spans, static_cast<double>(spans) / seconds);
    std::fflush(stdout);
    ok = ok && spans > 0 && (expected == 0 || spans == expected);
    expected = spans;
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.sink = (fs::path(argv[0]).parent_path() / "otlp_sink").string();
  options.grpc_sink = (fs::path(argv[0]).parent_path() / "otlp_grpc_sink").string();
  CLI::App cli{"Measures trace2d's OTLP export: spans/s into a discarding receiver, or span building per tree size."};
  cli.add_option("--trace2d", options.trace2d, "trace2d binary")->capture_default_str();
  cli.add_option("--sink", options.sink, "otlp_sink binary")->capture_default_str();
  cli.add_option("--grpc-sink", options.grpc_sink, "otlp_grpc_sink binary")->capture_default_str();
  cli.add_option("--protocol", options.protocol, "http (OTLP/HTTP into otlp_sink) or grpc (OTLP/gRPC into otlp_grpc_sink)")
      ->check(CLI::IsMember({"http", "grpc"}))
      ->capture_default_str();
  cli.add_option("--traces", options.traces, "Real git traces to copy")->capture_default_str();
  cli.add_option("--events", options.events, "Events in the database (whole copies)")->capture_default_str();
  cli.add_option("--work-dir", options.work_dir, "Database and files (default: a fresh temp dir)");
  cli.add_option("--daemon-arg", options.daemon_args, "Extra trace2d flag (repeatable)");
  cli.add_option("--tree", options.tree, "Span building for one process with this many child gits");
  cli.add_option("--loader", options.loader, "With --tree: export, whole, or both")
      ->check(CLI::IsMember({"both", "export", "whole"}))
      ->capture_default_str();
  CLI11_PARSE(cli, argc, argv);
  try {
    WorkDir work(options.work_dir);
    return options.tree > 0 ? run_tree(options, work.path()) : run_daemon(options, work.path());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "export_bench: %s\n", e.what());
    return 1;
  }
}
