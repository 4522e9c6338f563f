// Client benchmark: what an enabled region enter/leave pair costs the
// calling thread, with the writer thread draining to /dev/null and to a
// real trace2d over its stream socket (and, for reference, with tracing off).
//
//   client_bench [--trace2d build/release/bin/trace2d] [--bursts 200]
//                [--burst 1000] [--threads 1]
//
// Each target runs in its own process (the library has one session per
// process): the program re-runs itself with --child TARGET. A child times
// bursts of `burst` pairs (trace2d::client::Region), sleeping 10 ms after
// each so the queue (1 MiB) drains as it would in a real program, and
// reports the median and 90th percentile nanoseconds per pair over all
// bursts, then one unpaced run of bursts*burst pairs (a flood: whatever
// the queue cannot hold is dropped, and the drops are counted).

#include <trace2d/client.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
namespace t2 = trace2d::client;

struct Settings {
  int bursts = 200;
  int burst = 1000;
  int threads = 1;
  std::size_t queue_bytes = std::size_t{1} << 20;
};

double ns_per_pair(Clock::duration elapsed, long pairs) {
  return static_cast<double>(
             std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()) /
         static_cast<double>(pairs);
}

// One thread's bursts: ns per pair of each.
std::vector<double> paced(const Settings& s) {
  std::vector<double> samples;
  for (int b = 0; b < s.bursts; ++b) {
    const auto start = Clock::now();
    for (int i = 0; i < s.burst; ++i) {
      t2::Region region("bench", "pair");
    }
    samples.push_back(ns_per_pair(Clock::now() - start, s.burst));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return samples;
}

int run_child(const std::string& target, const Settings& s, char** argv) {
  t2::Options options;
  options.target = target.empty() ? "0" : target;
  options.exit_flush_timeout = std::chrono::milliseconds(2000);
  options.queue_bytes = s.queue_bytes;
  t2::start(1, argv, options);
  for (int i = 0; i < 10000; ++i) {  // warm up: buffers, page faults, the writer
    t2::Region region("bench", "warm-up");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::uint64_t dropped_warming = t2::dropped();

  std::vector<std::vector<double>> per_thread(static_cast<std::size_t>(s.threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < s.threads; ++t) {
    pool.emplace_back([&, t] {
      t2::Thread thread("bench");
      per_thread[static_cast<std::size_t>(t)] = paced(s);
    });
  }
  for (auto& t : pool) {
    t.join();
  }
  std::vector<double> samples;
  for (const auto& v : per_thread) {
    samples.insert(samples.end(), v.begin(), v.end());
  }
  std::sort(samples.begin(), samples.end());
  const std::uint64_t dropped_paced = t2::dropped() - dropped_warming;

  const long flood = static_cast<long>(s.bursts) * s.burst;
  const auto start = Clock::now();
  for (long i = 0; i < flood; ++i) {
    t2::Region region("bench", "pair");
  }
  const double flood_ns = ns_per_pair(Clock::now() - start, flood);
  const std::uint64_t dropped_flood = t2::dropped() - dropped_paced - dropped_warming;
  std::printf("%.0f %.0f %llu %.0f %llu\n", samples[samples.size() / 2],
              samples[samples.size() * 9 / 10], static_cast<unsigned long long>(dropped_paced),
              flood_ns, static_cast<unsigned long long>(dropped_flood));
  return t2::exit(0);
}

std::string run_self(const std::string& self, const std::string& target, const Settings& s) {
  const std::string out_path =
      std::filesystem::temp_directory_path() / ("client_bench." + std::to_string(::getpid()));
  std::vector<std::string> args = {self,
                                   "--child",
                                   target.empty() ? "off" : target,
                                   "--bursts",
                                   std::to_string(s.bursts),
                                   "--burst",
                                   std::to_string(s.burst),
                                   "--threads",
                                   std::to_string(s.threads),
                                   "--queue-bytes",
                                   std::to_string(s.queue_bytes)};
  std::vector<char*> argv;
  for (auto& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = -1;
  if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ) == 0) {
    ::waitpid(pid, nullptr, 0);
  }
  posix_spawn_file_actions_destroy(&actions);
  char line[256] = {};
  if (FILE* f = std::fopen(out_path.c_str(), "r")) {
    if (std::fgets(line, sizeof line, f) == nullptr) {
      line[0] = '\0';
    }
    std::fclose(f);
  }
  std::filesystem::remove(out_path);
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  std::string child;
  std::string trace2d;
  CLI::App cli{"Measures the caller's cost of an enabled region enter/leave pair."};
  cli.add_option("--trace2d", trace2d, "trace2d binary (also measure against a running trace2d)");
  cli.add_option("--bursts", s.bursts, "Bursts per thread")->capture_default_str();
  cli.add_option("--burst", s.burst, "Pairs per burst")->capture_default_str();
  cli.add_option("--threads", s.threads, "Threads emitting at once")->capture_default_str();
  cli.add_option("--child", child, "(internal) measure one target in this process");
  cli.add_option("--queue-bytes", s.queue_bytes, "(internal) the child's queue bound");
  CLI11_PARSE(cli, argc, argv);
  if (!child.empty()) {
    return run_child(child == "off" ? "" : child, s, argv);
  }

  const std::string self = std::filesystem::canonical("/proc/self/exe");
  struct Target {
    std::string name;
    std::string target;
    std::size_t queue_bytes = std::size_t{1} << 20;
  };
  // The last row measures the cost of an event that is dropped: a queue of
  // 64 bytes holds no event, so every one is refused (and counted).
  std::vector<Target> targets = {{"tracing off", ""},
                                 {"/dev/null", "/dev/null"},
                                 {"all dropped (64 B queue)", "/dev/null", 64}};
  const std::string dir =
      std::filesystem::temp_directory_path() / ("client_bench-" + std::to_string(::getpid()));
  pid_t daemon = -1;
  if (!trace2d.empty()) {
    std::filesystem::create_directories(dir);
    const std::string socket = dir + "/t.sock";
    std::vector<std::string> args = {trace2d,         "--config", "",
                                     "--socket",      socket,     "--dgram-socket",
                                     dir + "/d.sock", "--db",     dir + "/t.db"};
    std::vector<char*> cargs;
    for (auto& a : args) {
      cargs.push_back(a.data());
    }
    cargs.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&daemon, trace2d.c_str(), &actions, nullptr, cargs.data(), environ) != 0) {
      std::fprintf(stderr, "cannot start %s\n", trace2d.c_str());
      return 1;
    }
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 2000 && !std::filesystem::exists(socket); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    targets.push_back({"trace2d (stream socket)", "af_unix:stream:" + socket});
  }

  std::printf("%d thread(s), %d bursts of %d pairs each, 10 ms apart\n\n", s.threads, s.bursts,
              s.burst);
  std::printf("%-24s %14s %14s %10s %16s %14s\n", "target", "median ns/pair", "p90 ns/pair",
              "dropped", "flood ns/pair", "flood dropped");
  double dropped_event_ns = 0;
  for (const auto& [name, target, queue_bytes] : targets) {
    double median = 0, p90 = 0, flood = 0;
    unsigned long long dropped = 0, flood_dropped = 0;
    Settings run = s;
    run.queue_bytes = queue_bytes;
    const std::string line = run_self(self, target, run);
    if (std::sscanf(line.c_str(), "%lf %lf %llu %lf %llu", &median, &p90, &dropped, &flood,
                    &flood_dropped) != 5) {
      std::printf("%-24s failed\n", name.c_str());
      continue;
    }
    std::printf("%-24s %14.0f %14.0f %10llu %16.0f %14llu\n", name.c_str(), median, p90, dropped,
                flood, flood_dropped);
    if (queue_bytes < 1024) {
      dropped_event_ns = median / 2;  // a pair is two events
    }
  }
  std::printf("\ncaller's cost of one dropped event: %.1f ns (median of the paced bursts)\n",
              dropped_event_ns);
  if (daemon > 0) {
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    std::filesystem::remove_all(dir);
  }
  return 0;
}
