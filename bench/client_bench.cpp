// Client benchmark: what an enabled region enter/leave pair costs the
// calling thread, with the writer thread draining to /dev/null and to a
// real trace2d over its stream socket (and, for reference, with tracing off).
//
//   client_bench [--trace2d build/release/bin/trace2d] [--bursts 200]
//                [--burst 1000] [--threads 1] [--labels 1,2,3,4,5,28,40]
//
// Each target runs in its own process (the library has one session per
// process): the program re-runs itself with --child TARGET. A child times
// bursts of `burst` pairs (trace2d::client::Region), sleeping 10 ms after
// each so the queue (1 MiB) drains as it would in a real program, and
// reports the median and 90th percentile nanoseconds per pair over all
// bursts, then one unpaced run of bursts*burst pairs (a flood: whatever
// the queue cannot hold is dropped, and the drops are counted).
//
// Then, per label length, what an event costs when it is sent (to
// /dev/null, paced) and when it is dropped because the collector stalled:
// the child writes into a FIFO the parent holds open and never reads until
// the pipe and the queue are full, then times bursts*burst more pairs, all
// dropped. The room left in a full queue is whatever the last event did not
// fit into, so it depends on the label's length: 1.0 formatted the dropped
// events whenever that room lay between an event's lower bound and its real
// size (210-420 ns an event for labels of 1-5, 28 and 40 bytes).

#include <trace2d/client.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
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
  std::size_t label_length = 4;  // "pair"
};

std::string label_of(const Settings& s) {
  return s.label_length == 4 ? std::string("pair") : std::string(s.label_length, 'x');
}

double ns_per_pair(Clock::duration elapsed, long pairs) {
  return static_cast<double>(
             std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()) /
         static_cast<double>(pairs);
}

// One thread's bursts: ns per pair of each.
std::vector<double> paced(const Settings& s) {
  std::vector<double> samples;
  const std::string label = label_of(s);
  for (int b = 0; b < s.bursts; ++b) {
    const auto start = Clock::now();
    for (int i = 0; i < s.burst; ++i) {
      t2::Region region("bench", label);
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
  const std::string label = label_of(s);
  const auto start = Clock::now();
  for (long i = 0; i < flood; ++i) {
    t2::Region region("bench", label);
  }
  const double flood_ns = ns_per_pair(Clock::now() - start, flood);
  const std::uint64_t dropped_flood = t2::dropped() - dropped_paced - dropped_warming;
  std::printf("%.0f %.0f %llu %.0f %llu\n", samples[samples.size() / 2],
              samples[samples.size() * 9 / 10], static_cast<unsigned long long>(dropped_paced),
              flood_ns, static_cast<unsigned long long>(dropped_flood));
  return t2::exit(0);
}

std::int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Against a collector that stalled (a FIFO nobody reads): fills the pipe
// and the queue, then times bursts*burst pairs that are all dropped.
// Prints "<ns per dropped event> <events dropped> <events timed>".
int run_stalled_child(const std::string& fifo, const Settings& s, char** argv) {
  t2::Options options;
  options.target = fifo;
  options.queue_bytes = s.queue_bytes;
  options.exit_flush_timeout = std::chrono::milliseconds(50);
  if (!t2::start(1, argv, options)) {
    std::printf("failed %s\n", std::string(t2::off_reason()).c_str());
    return 1;
  }
  const std::string label = label_of(s);
  // Fill until drops begin, let the writer find the pipe full, fill again:
  // the queue then stays as full as events of this size leave it.
  for (int round = 0; round < 2; ++round) {
    const std::uint64_t before = t2::dropped();
    for (long i = 0; i < 10'000'000 && t2::dropped() == before; ++i) {
      t2::Region region("bench", label);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Timed by this thread's CPU clock as well as the wall clock: on a shared,
  // busy host the wall clock also counts the time other processes ran.
  const long pairs = static_cast<long>(s.bursts) * s.burst;
  const std::uint64_t before = t2::dropped();
  const std::int64_t cpu_start = thread_cpu_ns();
  const auto start = Clock::now();
  for (long i = 0; i < pairs; ++i) {
    t2::Region region("bench", label);
  }
  const double ns = ns_per_pair(Clock::now() - start, pairs * 2);
  const double cpu_ns =
      static_cast<double>(thread_cpu_ns() - cpu_start) / static_cast<double>(pairs * 2);
  std::printf("%.1f %llu %ld %.1f\n", ns, static_cast<unsigned long long>(t2::dropped() - before),
              pairs * 2, cpu_ns);
  return t2::exit(0);
}

std::string run_self(const std::string& self, const std::string& target, const Settings& s,
                     const std::string& mode = "--child") {
  const std::string out_path =
      std::filesystem::temp_directory_path() / ("client_bench." + std::to_string(::getpid()));
  std::vector<std::string> args = {self,
                                   mode,
                                   target.empty() ? "off" : target,
                                   "--label-length",
                                   std::to_string(s.label_length),
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
  std::vector<std::size_t> labels = {1, 2, 3, 4, 5, 28, 40};
  cli.add_option("--labels", labels, "Label lengths for the per-length rows")
      ->delimiter(',')
      ->capture_default_str();
  std::string stalled_child;
  cli.add_option("--label-length", s.label_length, "(internal) the child's label length");
  cli.add_option("--child-stalled", stalled_child, "(internal) measure drops into this FIFO");
  CLI11_PARSE(cli, argc, argv);
  if (!child.empty()) {
    return run_child(child == "off" ? "" : child, s, argv);
  }
  if (!stalled_child.empty()) {
    return run_stalled_child(stalled_child, s, argv);
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

  // Per label length: sent (paced, /dev/null) and dropped (stalled FIFO).
  const std::string fifo_dir =
      std::filesystem::temp_directory_path() / ("client_bench-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(fifo_dir);
  const std::string fifo = fifo_dir + "/collector";
  if (::mkfifo(fifo.c_str(), 0600) != 0) {
    std::fprintf(stderr, "cannot make %s\n", fifo.c_str());
    return 1;
  }
  std::printf("\n%-12s %14s %18s %18s %16s\n", "label bytes", "sent ns/event",
              "dropped ns/event", "dropped cpu ns", "dropped/timed");
  for (const std::size_t length : labels) {
    Settings run = s;
    run.label_length = length;
    double median = 0, p90 = 0, flood = 0;
    unsigned long long dropped = 0, flood_dropped = 0;
    const std::string sent = run_self(self, "/dev/null", run);
    const bool sent_ok = std::sscanf(sent.c_str(), "%lf %lf %llu %lf %llu", &median, &p90,
                                     &dropped, &flood, &flood_dropped) == 5;
    // The parent holds the read end, never reading: a stalled collector.
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    run.queue_bytes = std::size_t{64} << 10;
    const std::string stalled = run_self(self, fifo, run, "--child-stalled");
    ::close(reader);
    double drop_ns = 0;
    double drop_cpu_ns = 0;
    unsigned long long stalled_dropped = 0;
    long timed = 0;
    const bool drop_ok = std::sscanf(stalled.c_str(), "%lf %llu %ld %lf", &drop_ns,
                                     &stalled_dropped, &timed, &drop_cpu_ns) == 4;
    std::printf("%-12zu %14.1f %18.1f %18.1f %9llu/%ld\n", length, sent_ok ? median / 2 : -1.0,
                drop_ok ? drop_ns : -1.0, drop_ok ? drop_cpu_ns : -1.0, stalled_dropped, timed);
  }
  std::filesystem::remove_all(fifo_dir);
  if (daemon > 0) {
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    std::filesystem::remove_all(dir);
  }
  return 0;
}
