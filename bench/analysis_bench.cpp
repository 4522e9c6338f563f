// Analysis benchmark: how long the trace2ctl reports take on a big database.
//
// Builds a database of about --events events by importing the real git
// traces of tests/data/traces many times over (each copy with its own SIDs
// and its times shifted by a minute, through the real `trace2d import`),
// then runs the real trace2ctl commands against it and reports wall-clock
// times (process start to exit, as a user sees them).
//
//   analysis_bench --trace2d build/release/bin/trace2d --trace2ctl build/release/bin/trace2ctl
//                  --traces tests/data/traces [--events 1000000] [--runs 10] [--dir DIR]
//
// Targets (issue 4): `tree` for one root under 100 ms, `stats` over
// everything under 2 s; exits 1 when one is missed.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/sqlite.hpp"
#include "bench/support.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

constexpr double k_tree_target_ms = 100;
constexpr double k_stats_target_ms = 2000;

struct Options {
  std::string trace2d;
  std::string trace2ctl;
  std::string traces = "tests/data/traces";
  std::string dir;
  long events = 1'000'000;
  int runs = 10;
};

// Runs `argv` with stdout to /dev/null; returns the wall time in ms.
double run_timed(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const auto start = clock_type::now();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw std::runtime_error("cannot run " + argv[0]);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string command;
    for (const std::string& a : argv) {
      command += a + " ";
    }
    throw std::runtime_error("failed: " + command);
  }
  return ms;
}

struct Timing {
  std::string name;
  double min = 0;
  double median = 0;
  double max = 0;
};

Timing measure(const std::string& name, const std::vector<std::string>& argv, int runs) {
  run_timed(argv);  // warm-up: page cache, as for a user asking twice
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    ms.push_back(run_timed(argv));
  }
  std::sort(ms.begin(), ms.end());
  return {name, ms.front(), ms[ms.size() / 2], ms.back()};
}

int run(const Options& options) {
  const fs::path dir = options.dir.empty() ? fs::temp_directory_path() / "t2d-analysis-bench" : fs::path(options.dir);
  const fs::path traces = dir / "traces";
  const std::string db = (dir / "bench.db").string();
  fs::remove_all(dir);
  const auto [copies, per_copy] = trace2d::bench::write_trace_copies(options.traces, traces.string(), options.events);
  std::printf("importing %d copies of %ld events (%ld events) into %s\n", copies, per_copy, copies * per_copy,
              db.c_str());
  std::fflush(stdout);
  const double import_ms = run_timed({options.trace2d, "--config", "", "import", "--db", db, traces.string()});

  trace2d::db::Database check(db, trace2d::db::OpenMode::read_only);
  const auto count = [&](const char* sql) { return check.query_int(sql).value_or(0); };
  std::printf("imported in %.1f s: %lld events, %lld sessions, %lld regions, %lld children; %.0f MiB\n",
              import_ms / 1000, static_cast<long long>(count("SELECT count(*) FROM event_store")),
              static_cast<long long>(count("SELECT count(*) FROM sessions")),
              static_cast<long long>(count("SELECT count(*) FROM region_store")),
              static_cast<long long>(count("SELECT count(*) FROM child_store")),
              static_cast<double>(fs::file_size(db)) / (1024.0 * 1024.0));
  const auto root_of = [&](const std::string& cmd) {
    return check
        .query_text("SELECT sid FROM sessions WHERE depth = 0 AND cmd_name = '" + cmd + "' ORDER BY sid LIMIT 1 OFFSET " +
                    std::to_string(copies / 2))
        .value_or("");
  };
  // The copies span about a day from the traces' own dates: compare their
  // first half with their second.
  const std::string first = check.query_text("SELECT min(start_time) FROM sessions").value_or("");
  const std::string middle =
      check.query_text("SELECT start_time FROM sessions WHERE start_time IS NOT NULL ORDER BY start_time LIMIT 1 OFFSET "
                       "(SELECT count(*) / 2 FROM sessions WHERE start_time IS NOT NULL)")
          .value_or("");
  const std::vector<std::string> halves{"--since", first, "--split", middle, "--until", "now"};
  const std::string fetch = root_of("fetch");
  const std::string clone = root_of("clone");
  const std::string html = (dir / "report.html").string();
  const std::vector<std::string> ctl{options.trace2ctl, "--db", db};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), ctl.begin(), ctl.end());
    return args;
  };

  std::vector<Timing> timings{
      measure("tree <fetch root>", with({"tree", fetch}), options.runs),
      measure("tree --json <fetch root>", with({"--json", "tree", fetch}), options.runs),
      measure("tree <clone root>", with({"tree", clone}), options.runs),
      measure("export --format chrome <fetch root>", with({"export", fetch}), options.runs),
      measure("stats", with({"stats"}), options.runs),
      measure("stats --by regions", with({"stats", "--by", "regions"}), options.runs),
      measure("top", with({"top"}), options.runs),
      measure("top --by regions", with({"top", "--by", "regions"}), options.runs),
      measure("report --html (5 trees)", with({"report", "--html", html}), options.runs),
      measure("compare (two halves)", with({"compare", halves[0], halves[1], halves[2], halves[3], halves[4], halves[5]}),
              options.runs),
      measure("compare --regions all (two halves)",
              with({"compare", "--regions", "all", halves[0], halves[1], halves[2], halves[3], halves[4], halves[5]}),
              options.runs),
  };
  std::printf("\n%-38s %9s %9s %9s\n", "command (wall time, ms)", "min", "median", "max");
  for (const Timing& t : timings) {
    std::printf("%-38s %9.1f %9.1f %9.1f\n", t.name.c_str(), t.min, t.median, t.max);
  }
  const bool tree_ok = timings[0].median < k_tree_target_ms;
  const bool stats_ok = timings[4].median < k_stats_target_ms;
  std::printf("\ntargets: tree < %.0f ms: %s; stats < %.0f ms: %s\n", k_tree_target_ms, tree_ok ? "met" : "MISSED",
              k_stats_target_ms, stats_ok ? "met" : "MISSED");
  return tree_ok && stats_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App cli{"Times the trace2ctl reports on a database of many imported real git traces"};
  cli.add_option("--trace2d", options.trace2d, "trace2d binary")->required();
  cli.add_option("--trace2ctl", options.trace2ctl, "trace2ctl binary")->required();
  cli.add_option("--traces", options.traces, "Directory of captured traces")->capture_default_str();
  cli.add_option("--events", options.events, "Events in the database (rounded up to whole copies)")
      ->capture_default_str();
  cli.add_option("--runs", options.runs, "Timed runs per command (after one warm-up)")->capture_default_str();
  cli.add_option("--dir", options.dir, "Work directory (replaced; default: $TMPDIR/t2d-analysis-bench)");
  CLI11_PARSE(cli, argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "analysis_bench: %s\n", e.what());
    return 2;
  }
}
