// Ingest benchmark: replays real git traces into a real trace2d, or into the
// raw drain reader in its place, from concurrent writers, and measures events
// per second from the first write until the last event is committed (trace2d:
// visible to a reader of its database) or read (drain_reader). Zero loss is
// checked: stored events equal sent events, no rejects, no lines dropped,
// no kernel drops, and trace2d exits 0; the program exits 1 otherwise.
//
//   ingest_bench --trace2d build/release/bin/trace2d --shape short|long|dgram|dir
//                [--sink trace2d|drain] [--clients N] [--events N] [--files N]
//                [--rate EVENTS_PER_S] [--storage-report] [--json-samples N]
//
// --rate paces the writers and sets each event's `time` to the moment it is
// written, for the latency report. --storage-report sizes the database after
// trace2d stopped and checks `events.json` against the sent lines.

#include <CLI/CLI.hpp>
#include <map>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/commit_poller.hpp"
#include "bench/db_report.hpp"
#include "bench/support.hpp"
#include "bench/writers.hpp"

namespace {

using namespace trace2d::bench;

struct Options {
  PayloadOptions payload;
  std::string sink = "trace2d";
  std::string trace2d = "build/release/bin/trace2d";
  std::string drain_reader;
  std::string work_dir;
  std::vector<std::string> daemon_args;
  double rate = 0;
  bool storage_report = false;
  std::int64_t json_samples = 500;
  int poll_us = 1000;
};

// The sending side, whatever reads it.
struct Sender {
  const Options& options;
  Payload& payload;
  std::string work;
  std::vector<std::pair<std::string, std::string>> moves;  // dir shape

  WriteStats send() {
    const std::string& shape = options.payload.shape;
    if (shape == "dgram") {
      return run_dgram_writers(payload, dgram_socket_in(work));
    }
    if (shape == "dir") {
      return rename_all(moves);
    }
    return run_stream_writers(payload, stream_socket_in(work), Pace{options.rate});
  }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::int64_t field(const std::string& text, const std::string& key) {
  const auto at = text.find(key + "=");
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + key.size() + 1));
}

void print_head(const Options& options, const Payload& payload) {
  std::printf("RESULT bench=ingest shape=%s sink=%s clients=%zu sessions=%lld events=%lld bytes=%llu ",
              options.payload.shape.c_str(), options.sink.c_str(), payload.clients.size(),
              static_cast<long long>(payload.sessions), static_cast<long long>(payload.events),
              static_cast<unsigned long long>(payload.bytes));
}

int run_drain(const Options& options, Sender& sender) {
  const std::string& shape = options.payload.shape;
  const std::string out = sender.work + "/drain.out";
  std::vector<std::string> args = {options.drain_reader, "--expect", std::to_string(sender.payload.events)};
  if (shape == "dgram") {
    args.insert(args.end(), {"--dgram", dgram_socket_in(sender.work)});
  } else if (shape == "dir") {
    args.insert(args.end(), {"--dir", sender.work + "/watched"});
  } else {
    args.insert(args.end(), {"--stream", stream_socket_in(sender.work)});
  }
  Child reader(args, out, sender.work + "/drain.err");
  while (read_file(out).find("ready") == std::string::npos) {
    if (reader.try_wait()) {
      std::fprintf(stderr, "drain_reader failed: %s\n", read_file(sender.work + "/drain.err").c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto start = Clock::now();
  const WriteStats stats = sender.send();
  const auto sent = Clock::now();
  std::optional<int> code;
  const auto deadline = sent + std::chrono::seconds(60);
  while (!(code = reader.try_wait()) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::string report = read_file(out);
  const std::int64_t lines = field(report, "lines");
  // steady_clock is CLOCK_MONOTONIC, the clock drain_reader reports in.
  const double elapsed =
      static_cast<double>(field(report, "last_ns") - start.time_since_epoch().count()) / 1e9;
  const bool lossless = code && *code == 0 && lines == sender.payload.events && stats.failed_writes == 0;
  print_head(options, sender.payload);
  std::printf("sent_s=%.3f elapsed_s=%.3f events_per_s=%.0f read=%lld failed_writes=%lld loss=%s\n",
              seconds_between(start, sent), elapsed, static_cast<double>(sender.payload.events) / elapsed,
              static_cast<long long>(lines), static_cast<long long>(stats.failed_writes),
              lossless ? "none" : "YES");
  return lossless ? 0 : 1;
}

bool wait_until_empty(const std::string& dir, Clock::time_point& when) {
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline) {
    when = Clock::now();
    if (std::filesystem::is_empty(dir)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

int run_trace2d(const Options& options, Sender& sender) {
  const bool dir_shape = options.payload.shape == "dir";
  std::vector<std::string> extra = options.daemon_args;
  if (dir_shape) {
    extra.insert(extra.end(), {"--watch", sender.work + "/watched"});
  }
  Child daemon = start_trace2d(options.trace2d, sender.work, extra);
  const std::string db_path = database_in(sender.work);
  CommitPoller poller(db_path, sender.payload.events_by_sid(), options.rate > 0);

  const auto start = Clock::now();
  WriteStats stats;
  Clock::time_point sent;
  std::thread writers([&] {
    stats = sender.send();
    sent = Clock::now();
  });
  Clock::time_point done;
  bool complete = poller.wait_for(sender.payload.events, std::chrono::microseconds(options.poll_us),
                                  std::chrono::seconds(30), done);
  writers.join();
  bool emptied = true;
  if (dir_shape && complete) {
    emptied = wait_until_empty(sender.work + "/watched", done);
  }
  const std::int64_t peak_kib = proc_status_kib(daemon.pid(), "VmHWM");
  const std::map<std::string, double> thread_cpu = thread_cpu_seconds(daemon.pid());
  const int code = daemon.terminate();
  const LossReport loss = read_loss(db_path);
  const double elapsed = seconds_between(start, done);
  const bool lossless = complete && emptied && code == 0 && loss.stored == sender.payload.events &&
                        loss.sessions == sender.payload.sessions && loss.rejects == 0 &&
                        loss.dropped_lines == 0 && loss.kernel_drops == 0 && stats.failed_writes == 0;
  print_head(options, sender.payload);
  std::printf(
      "sent_s=%.3f elapsed_s=%.3f events_per_s=%.0f peak_rss_mib=%.1f queue_peak_mib=%.1f stored=%lld "
      "stored_sessions=%lld "
      "rejects=%lld dropped_lines=%lld kernel_drops=%lld failed_writes=%lld dir_emptied=%s exit=%d "
      "polls=%lld poll_rows=%lld poll_s=%.3f loss=%s\n",
      seconds_between(start, sent), elapsed, static_cast<double>(sender.payload.events) / elapsed,
      static_cast<double>(peak_kib) / 1024.0, static_cast<double>(loss.queue_peak_bytes) / (1024.0 * 1024.0),
      static_cast<long long>(loss.stored),
      static_cast<long long>(loss.sessions), static_cast<long long>(loss.rejects),
      static_cast<long long>(loss.dropped_lines), static_cast<long long>(loss.kernel_drops),
      static_cast<long long>(stats.failed_writes), emptied ? "yes" : "no", code,
      static_cast<long long>(poller.polls()), static_cast<long long>(poller.rows_read()), poller.poll_seconds(),
      lossless ? "none" : "YES");
  // Where trace2d's CPU went, per event (the main thread is start-up, the
  // signal handling and, with --io-threads 1, the datagram and directory
  // sources and the listener).
  const auto us_per_event = [&](std::initializer_list<const char*> names) {
    double total = 0;
    for (const char* name : names) {
      if (const auto it = thread_cpu.find(name); it != thread_cpu.end()) {
        total += it->second;
      }
    }
    return total * 1e6 / static_cast<double>(std::max<std::int64_t>(1, sender.payload.events));
  };
  std::printf("THREADS stream_us_per_event=%.2f parse_us_per_event=%.2f store_us_per_event=%.2f "
              "main_us_per_event=%.2f export_us_per_event=%.2f\n",
              us_per_event({"trace2d-stream"}), us_per_event({"trace2d-parse"}), us_per_event({"trace2d-store"}),
              us_per_event({"trace2d", "trace2d-io"}), us_per_event({"trace2d-otlp"}));
  bool ok = lossless;
  if (options.rate > 0) {
    const LatencyReport latency = measure_latency(db_path, poller);
    std::printf(
        "LATENCY rate=%.0f achieved_events_per_s=%.0f stamped=%lld measured=%lld unseen=%lld p50_ms=%.2f "
        "p99_ms=%.2f max_ms=%.2f\n",
        options.rate, static_cast<double>(sender.payload.events) / seconds_between(start, sent),
        static_cast<long long>(stats.stamped), static_cast<long long>(latency.measured),
        static_cast<long long>(latency.unseen), latency.p50_ms, latency.p99_ms, latency.max_ms);
    for (std::size_t second = 0; second < latency.seconds.size(); ++second) {
      const LatencyReport::Second& row = latency.seconds[second];
      std::printf("SECOND second=%zu events=%lld p50_ms=%.2f p99_ms=%.2f\n", second,
                  static_cast<long long>(row.events), row.p50_ms, row.p99_ms);
    }
    ok = ok && latency.unseen == 0 && latency.measured == stats.stamped;
  }
  if (options.storage_report) {
    const StorageReport storage = measure_storage(db_path, sender.payload, options.json_samples);
    print_storage(storage, sender.payload);
    ok = ok && storage.json_mismatched == 0 && storage.json_checked > 0;
  }
  if (!ok) {
    std::fprintf(stderr, "ingest_bench: loss or mismatch; trace2d log:\n%s\n",
                 read_file(sender.work + "/trace2d.log").c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.drain_reader = (std::filesystem::path(argv[0]).parent_path() / "drain_reader").string();
  CLI::App cli{"Replays real git traces into trace2d (or the raw drain reader) and measures events/s."};
  options.payload.add_to(cli);
  cli.add_option("--sink", options.sink, "trace2d, or drain: the raw drain limit (drain_reader)")
      ->check(CLI::IsMember({"trace2d", "drain"}))
      ->capture_default_str();
  cli.add_option("--trace2d", options.trace2d, "trace2d binary")->capture_default_str();
  cli.add_option("--drain-reader", options.drain_reader, "drain_reader binary")->capture_default_str();
  cli.add_option("--work-dir", options.work_dir, "Sockets, database, files (default: a fresh temp dir)");
  cli.add_option("--daemon-arg", options.daemon_args, "Extra trace2d flag (repeatable)");
  cli.add_option("--rate", options.rate, "Events/s in all, paced (latency); 0: as fast as possible");
  cli.add_flag("--storage-report", options.storage_report, "Size the database, check events.json");
  cli.add_option("--json-samples", options.json_samples, "Events compared with the sent lines (0: all)")
      ->capture_default_str();
  cli.add_option("--poll-us", options.poll_us, "How often the database is polled, microseconds")
      ->capture_default_str();
  CLI11_PARSE(cli, argc, argv);
  try {
    raise_fd_limit();
    Payload payload = make_payload(options.payload);
    WorkDir work(options.work_dir);
    Sender sender{options, payload, work.path(), {}};
    if (options.payload.shape == "dir") {
      const std::string staging = work.path() + "/staging";
      std::filesystem::create_directories(staging);
      std::filesystem::create_directories(work.path() + "/watched");
      sender.moves = stage_files(payload, staging, work.path() + "/watched");
    }
    return options.sink == "drain" ? run_drain(options, sender) : run_trace2d(options, sender);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ingest_bench: %s\n", e.what());
    return 1;
  }
}
