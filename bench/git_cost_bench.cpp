// Cost to git: the wall time of real git commands (status, log -n 20,
// diff HEAD~1, rev-parse HEAD, in turn) in a repository of a few thousand
// files, with tracing (A) off, (B) to a trace directory on tmpfs (the
// cheapest target git has: a file per process, nothing reading it), and to
// a running trace2d over its stream socket: (C) as it starts by default
// (its parse, store and export threads under SCHED_BATCH, the readers not),
// (D) started under SCHED_BATCH as a whole (`chrt --batch 0`, what the
// unit's CPUSchedulingPolicy=batch gives it), (E) with
// --no-batch-scheduling (every thread under the normal policy). Under
// SCHED_BATCH a thread does not preempt git's on wake-up. Every round runs
// the commands under each variant, in blocks of --block commands, the order
// of the variants rotating from block to block so that drift (other load,
// CPU frequency) falls on all alike. Reports, per round, the added wall
// time of B to E as a percentage of A, and the same from the median
// command of each kind (robust to single commands the machine's other load
// delayed).
//
//   git_cost_bench --trace2d build/release/bin/trace2d [--commands 500] [--rounds 5]

#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/db_report.hpp"
#include "bench/support.hpp"
#include "db/sqlite.hpp"

namespace {

using namespace trace2d;
using Env = std::map<std::string, std::string>;

constexpr std::size_t k_variants = 5;  // A off, B tmpfs directory, C trace2d, D all batch, E none batch
constexpr std::array<char, k_variants> k_names = {'a', 'b', 'c', 'd', 'e'};
constexpr std::size_t k_kinds = 4;     // status, log, diff, rev-parse

double median(std::vector<double>& values) {
  if (values.empty()) {
    return 0;
  }
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

int run_git(const std::string& git, const std::string& repo, const std::vector<std::string>& args,
            const Env& env = {}) {
  std::vector<std::string> argv = {git, "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  bench::Child child(argv, "/dev/null", "/dev/null", env);
  return child.wait();
}

void check_git(const std::string& git, const std::string& repo, const std::vector<std::string>& args) {
  if (run_git(git, repo, args) != 0) {
    throw std::runtime_error("git " + args.front() + " failed while making the repository");
  }
}

// A repository of `files` files in directories of 60, with 25 commits of
// history and one uncommitted change (so status and diff have work to do).
void make_repository(const std::string& git, const std::string& repo, int files) {
  files = std::max(files, 2);
  std::filesystem::create_directories(repo);
  check_git(git, repo, {"init", "-q"});
  for (int i = 0; i < files; ++i) {
    const std::string dir = repo + "/dir" + std::to_string(i / 60);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/file" + std::to_string(i % 60) + ".txt") << "file " << i << "\nline two\n";
  }
  check_git(git, repo, {"add", "-A"});
  check_git(git, repo, {"commit", "-qm", "initial"});
  const int dirs = std::max(1, std::min(10, files / 60));
  for (int i = 0; i < 25; ++i) {
    std::ofstream(repo + "/dir" + std::to_string(i % dirs) + "/file0.txt", std::ios::app) << "change " << i << "\n";
    check_git(git, repo, {"commit", "-qam", "change " + std::to_string(i)});
  }
  std::ofstream(repo + "/dir0/file1.txt", std::ios::app) << "uncommitted\n";
  check_git(git, repo, {"status", "-s"});  // refresh the index once
}

std::size_t count_and_clear(const std::string& dir) {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::filesystem::remove(entry.path());
    ++files;
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace2d = "build/release/bin/trace2d";
  std::string git = "git";
  std::string work_dir;
  std::string shm_root = "/dev/shm";
  int files = 3000;
  int commands = 500;
  int rounds = 5;
  int block = 10;
  CLI::App cli{"Wall time of real git commands: tracing off, to a tmpfs directory, to trace2d."};
  cli.add_option("--trace2d", trace2d, "trace2d binary")->capture_default_str();
  cli.add_option("--git", git, "git binary")->capture_default_str();
  cli.add_option("--files", files, "Files in the repository")->capture_default_str();
  cli.add_option("--commands", commands, "git commands per variant and round")->capture_default_str();
  cli.add_option("--rounds", rounds, "Rounds")->capture_default_str();
  cli.add_option("--block", block, "Commands run in a row under one variant")->capture_default_str();
  cli.add_option("--shm", shm_root, "tmpfs where the trace directory goes")->capture_default_str();
  cli.add_option("--work-dir", work_dir, "Repository, sockets, database (default: a fresh temp dir)");
  CLI11_PARSE(cli, argc, argv);
  try {
    // Only what the variants set may trace; git must not read our config.
    for (const char* name : {"GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF", "GIT_TRACE2_PARENT_SID",
                             "GIT_TRACE2_EVENT_NESTING", "GIT_TRACE2_BRIEF", "GIT_TRACE2_EVENT_BRIEF",
                             "GIT_TRACE", "GIT_DIR", "GIT_WORK_TREE"}) {
      ::unsetenv(name);
    }
    bench::WorkDir work(work_dir);
    const std::string home = work.path() + "/home";
    std::filesystem::create_directories(home);
    for (const auto& [key, value] : Env{{"HOME", home}, {"GIT_CONFIG_NOSYSTEM", "1"}, {"LC_ALL", "C"},
                                        {"GIT_AUTHOR_NAME", "t"}, {"GIT_AUTHOR_EMAIL", "t@example.com"},
                                        {"GIT_COMMITTER_NAME", "t"}, {"GIT_COMMITTER_EMAIL", "t@example.com"}}) {
      ::setenv(key.c_str(), value.c_str(), 1);
    }
    const std::string repo = work.path() + "/repo";
    make_repository(git, repo, files);
    const bench::WorkDir trace_dir("", shm_root);

    bench::Child daemon = bench::start_trace2d(trace2d, work.path(), {});
    const std::string batch_dir = work.path() + "/batch";
    std::filesystem::create_directories(batch_dir);
    bench::Child batch_daemon = bench::start_trace2d(trace2d, batch_dir, {}, {"chrt", "--batch", "0"});
    const std::string normal_dir = work.path() + "/normal";
    std::filesystem::create_directories(normal_dir);
    bench::Child normal_daemon = bench::start_trace2d(trace2d, normal_dir, {"--no-batch-scheduling"});
    const std::array<Env, k_variants> envs = {
        Env{}, Env{{"GIT_TRACE2_EVENT", trace_dir.path() + "/"}},
        Env{{"GIT_TRACE2_EVENT", "af_unix:stream:" + bench::stream_socket_in(work.path())}},
        Env{{"GIT_TRACE2_EVENT", "af_unix:stream:" + bench::stream_socket_in(batch_dir)}},
        Env{{"GIT_TRACE2_EVENT", "af_unix:stream:" + bench::stream_socket_in(normal_dir)}}};
    const std::array<std::vector<std::string>, k_kinds> kinds = {
        std::vector<std::string>{"status"}, {"log", "-n", "20"}, {"diff", "HEAD~1"}, {"rev-parse", "HEAD"}};

    std::int64_t failures = 0;
    std::size_t trace_files = 0;
    for (int round = 0; round < rounds; ++round) {
      std::array<double, k_variants> seconds{};
      // Per variant and kind of command, each command's seconds: the medians
      // give a figure that one command delayed by the other tenants of the
      // machine cannot move.
      std::array<std::array<std::vector<double>, k_kinds>, k_variants> each{};
      for (int first = 0, index = 0; first < commands; first += block, ++index) {
        for (std::size_t v = 0; v < k_variants; ++v) {
          const std::size_t variant = (v + static_cast<std::size_t>(index + round)) % k_variants;
          for (int i = first; i < std::min(commands, first + block); ++i) {
            const auto kind = static_cast<std::size_t>(i) % k_kinds;
            const auto start = bench::Clock::now();
            failures += run_git(git, repo, kinds[kind], envs[variant]) == 0 ? 0 : 1;
            const double took = bench::seconds_between(start, bench::Clock::now());
            seconds[variant] += took;
            each[variant][kind].push_back(took);
          }
        }
      }
      const std::size_t round_files = count_and_clear(trace_dir.path());
      trace_files += round_files;
      std::array<double, k_variants> typical{};  // sum over the kinds of the median command
      for (std::size_t variant = 0; variant < k_variants; ++variant) {
        for (auto& times : each[variant]) {
          typical[variant] += median(times);
        }
      }
      std::printf("ROUND round=%d commands=%d a_ms_per_command=%.3f", round + 1, commands,
                  seconds[0] * 1000 / commands);
      const double b_pct = (seconds[1] / seconds[0] - 1) * 100;
      const double b_median_pct = (typical[1] / typical[0] - 1) * 100;
      for (std::size_t variant = 0; variant < k_variants; ++variant) {
        const char name = k_names[variant];
        std::printf(" %c_s=%.3f", name, seconds[variant]);
        if (variant == 0) {
          continue;
        }
        const double pct = (seconds[variant] / seconds[0] - 1) * 100;
        const double median_pct = (typical[variant] / typical[0] - 1) * 100;
        std::printf(" %c_pct=%.2f %c_median_pct=%.2f", name, pct, name, median_pct);
        if (variant > 1) {
          std::printf(" %c_minus_b_pp=%.2f %c_minus_b_median_pp=%.2f", name, pct - b_pct, name,
                      median_pct - b_median_pct);
        }
      }
      std::printf(" trace_files=%zu\n", round_files);
      std::fflush(stdout);
    }

    // Each trace2d must have every process of its variant, whole.
    const std::int64_t expected = static_cast<std::int64_t>(commands) * rounds;
    const auto check = [&](bench::Child& child, const std::string& dir, const char* name) {
      const std::string db_path = bench::database_in(dir);
      std::int64_t sessions = 0;
      const auto deadline = bench::Clock::now() + std::chrono::seconds(60);
      while (bench::Clock::now() < deadline) {
        db::Database db(db_path, db::OpenMode::read_only);
        db.set_busy_timeout(1000);
        sessions = db.query_int("SELECT count(*) FROM sessions WHERE status = 'complete'").value_or(0);
        if (sessions >= expected) {
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      const int code = child.terminate();
      const bench::LossReport loss = bench::read_loss(db_path);
      const bool lossless = code == 0 && sessions == expected && loss.sessions == expected && loss.rejects == 0 &&
                            loss.dropped_lines == 0;
      std::printf("DAEMON variant=%s sessions=%lld stored=%lld rejects=%lld exit=%d loss=%s\n", name,
                  static_cast<long long>(loss.sessions), static_cast<long long>(loss.stored),
                  static_cast<long long>(loss.rejects), code, lossless ? "none" : "YES");
      return lossless;
    };
    const bool c_lossless = check(daemon, work.path(), "C");
    const bool d_lossless = check(batch_daemon, batch_dir, "D");
    const bool e_lossless = check(normal_daemon, normal_dir, "E");
    const bool lossless = failures == 0 && c_lossless && d_lossless && e_lossless &&
                          trace_files == static_cast<std::size_t>(expected);
    std::printf("RESULT bench=git_cost commands=%d rounds=%d files=%d block=%d git_failures=%lld trace_files=%zu "
                "loss=%s\n",
                commands, rounds, files, block, static_cast<long long>(failures), trace_files,
                lossless ? "none" : "YES");
    return lossless ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "git_cost_bench: %s\n", e.what());
    return 1;
  }
}
