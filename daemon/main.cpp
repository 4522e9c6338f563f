// trace2d: the collector daemon. Parses flags, then hands over to app::Daemon.

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "daemon/app/daemon.hpp"
#include "daemon/app/options.hpp"
#include "daemon/source/socket_file.hpp"
#include "trace2d/version.hpp"

int main(int argc, char** argv) {
  using namespace trace2d;
  app::DaemonOptions options = app::default_options();
  CLI::App cli{"trace2d: collects Git Trace2 events into SQLite.\n"
               "Point git at it with GIT_TRACE2_EVENT=af_unix:stream:<socket>."};
  cli.set_version_flag("--version", std::string("trace2d ") + k_version);
  cli.add_option("--socket", options.stream.path, "Stream socket path (absolute; empty: none)")
      ->capture_default_str();
  cli.add_option("--dgram-socket", options.dgram.path, "Datagram socket path (absolute; empty: none)")
      ->capture_default_str();
  cli.add_option("--watch", options.watch_dirs, "Trace directory to watch (repeatable)");
  cli.add_option("--db", options.db_path, "SQLite database path")->capture_default_str();
  std::string mode = "0666";
  cli.add_option("--socket-mode", mode, "Permissions of the socket file (octal)")
      ->capture_default_str();
  cli.add_option("--io-threads", options.io_threads, "Threads reading sockets")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  std::size_t queue_mib = options.max_queue_bytes / (1024 * 1024);
  cli.add_option("--max-queue-mib", queue_mib,
                 "Memory for events read but not yet committed (MiB)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str();
  long overflow_ms = options.overflow_wait.count();
  cli.add_option("--overflow-wait-ms", overflow_ms,
                 "At the memory bound, pause reading this long before dropping (ms)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cli.add_option("--max-line-bytes", options.max_line_bytes,
                 "Longest event line accepted; longer lines are rejected")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
      ->capture_default_str();
  long grace_ms = options.shutdown_grace.count();
  cli.add_option("--shutdown-grace-ms", grace_ms,
                 "On SIGTERM, keep reading open connections this long (ms)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  long commit_ms = options.commit_interval.count();
  cli.add_option("--commit-interval-ms", commit_ms, "Longest time between commits under load (ms)")
      ->check(CLI::Range(1L, 10000L))
      ->capture_default_str();
  cli.add_option("--log-level", options.log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes start at 100; scripts expect 2 for bad usage.
    return cli.exit(e) == 0 ? 0 : 2;
  }

  try {
    options.stream.mode = static_cast<unsigned>(std::stoul(mode, nullptr, 8));
    options.dgram.mode = options.stream.mode;
  } catch (const std::exception&) {
    std::fprintf(stderr, "trace2d: --socket-mode: '%s' is not an octal mode\n", mode.c_str());
    return 2;
  }
  options.max_queue_bytes = queue_mib * 1024 * 1024;
  options.overflow_wait = std::chrono::milliseconds(overflow_ms);
  options.shutdown_grace = std::chrono::milliseconds(grace_ms);
  options.commit_interval = std::chrono::milliseconds(commit_ms);

  auto logger = spdlog::stderr_color_mt("trace2d");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(options.log_level));

  try {
    return app::Daemon(options).run();
  } catch (const source::StartupError& e) {
    spdlog::critical("{}", e.what());
    return 1;
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
    return 1;
  }
}
