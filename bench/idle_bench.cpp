// Memory with many idle connections: N stream clients each connect, send the
// `version` event of a real git trace (their own SID), and stay open, as git
// processes that run for a long time without tracing anything. Once every
// session is committed, trace2d's resident memory (VmRSS, and the peak VmHWM)
// is read. The open-file limit is raised for this process and trace2d.
//
//   idle_bench --trace2d build/release/bin/trace2d --connections 10000

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/db_report.hpp"
#include "bench/support.hpp"
#include "db/sqlite.hpp"

namespace {

using namespace trace2d;

std::string version_line(const std::string& traces) {
  for (const bench::ProcessTrace& trace : bench::load_traces(traces)) {
    if (!trace.lines.empty() && trace.lines.front().find("\"event\":\"version\"") != std::string::npos) {
      return trace.lines.front();
    }
  }
  throw std::runtime_error("no version event in " + traces);
}

std::int64_t count_sessions(const std::string& db_path) {
  db::Database db(db_path, db::OpenMode::read_only);
  db.set_busy_timeout(1000);
  return db.query_int("SELECT count(*) FROM sessions").value_or(0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace2d = "build/release/bin/trace2d";
  std::string traces = "tests/data/traces";
  std::string work_dir;
  int connections = 10000;
  std::vector<std::string> daemon_args;
  CLI::App cli{"trace2d's memory with many idle stream connections."};
  cli.add_option("--trace2d", trace2d, "trace2d binary")->capture_default_str();
  cli.add_option("--traces", traces, "Directory of captured .jsonl traces")->capture_default_str();
  cli.add_option("--connections", connections, "Idle connections")->capture_default_str();
  cli.add_option("--work-dir", work_dir, "Sockets and database (default: a fresh temp dir)");
  cli.add_option("--daemon-arg", daemon_args, "Extra trace2d flag (repeatable)");
  CLI11_PARSE(cli, argc, argv);
  try {
    bench::raise_fd_limit();
    const std::string line = version_line(traces);
    const auto at = line.find("@SID@");
    bench::WorkDir work(work_dir);
    bench::Child daemon = bench::start_trace2d(trace2d, work.path(), daemon_args);
    const std::string db_path = bench::database_in(work.path());
    const std::int64_t baseline_kib = bench::proc_status_kib(daemon.pid(), "VmRSS");

    std::vector<bench::Fd> open;
    open.reserve(static_cast<std::size_t>(connections));
    std::int64_t failed = 0;
    for (int i = 0; i < connections; ++i) {
      char sid[64];
      std::snprintf(sid, sizeof sid, "20261121T100000.000000Z-Hidle0000-P%08x", static_cast<unsigned>(i));
      const std::string event = line.substr(0, at) + sid + line.substr(at + 5);
      open.push_back(bench::connect_stream(bench::stream_socket_in(work.path())));
      failed += bench::send_all(open.back().get(), event.data(), event.size()) ? 0 : 1;
    }
    const auto deadline = bench::Clock::now() + std::chrono::seconds(120);
    std::int64_t sessions = 0;
    while ((sessions = count_sessions(db_path)) < connections && bench::Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Let the writer's and allocator's transient state settle before reading.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const std::int64_t rss_kib = bench::proc_status_kib(daemon.pid(), "VmRSS");
    const std::int64_t hwm_kib = bench::proc_status_kib(daemon.pid(), "VmHWM");
    open.clear();
    const int code = daemon.terminate();
    const bench::LossReport loss = bench::read_loss(db_path);
    const bool lossless = failed == 0 && code == 0 && loss.stored == connections &&
                          loss.sessions == connections && loss.rejects == 0;
    std::printf(
        "RESULT bench=idle connections=%d baseline_rss_mib=%.1f rss_mib=%.1f peak_rss_mib=%.1f "
        "per_connection_kib=%.2f stored=%lld rejects=%lld failed_writes=%lld exit=%d loss=%s\n",
        connections, static_cast<double>(baseline_kib) / 1024.0, static_cast<double>(rss_kib) / 1024.0,
        static_cast<double>(hwm_kib) / 1024.0,
        static_cast<double>(rss_kib - baseline_kib) / static_cast<double>(std::max(1, connections)),
        static_cast<long long>(loss.stored), static_cast<long long>(loss.rejects),
        static_cast<long long>(failed), code, lossless ? "none" : "YES");
    return lossless ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "idle_bench: %s\n", e.what());
    return 1;
  }
}
