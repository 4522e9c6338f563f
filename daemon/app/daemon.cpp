#include "daemon/app/daemon.hpp"

#include <pthread.h>

#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <thread>
#include <vector>

#include "daemon/app/backend.hpp"
#include "daemon/app/service_notifier.hpp"  // systemd (h-systemd)
#include "daemon/app/status_reporter.hpp"
#include "daemon/source/asio.hpp"
#include "daemon/source/dgram_receiver.hpp"
#include "daemon/source/dir_watcher.hpp"
#include "daemon/source/listeners.hpp"
#include "daemon/source/stream_server.hpp"
#include "proto/timestamp.hpp"
#include "trace2d/version.hpp"

namespace trace2d::app {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

}  // namespace

bool apply_log_level(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    return false;
  }
  spdlog::set_level(parsed);
  return true;
}

namespace {

// Every connection and trace file is a descriptor: take all the kernel
// allows (the soft limit is often 1024, the hard one far higher).
std::size_t raise_fd_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return 1024;
  }
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      limit = raised;
    } else {
      spdlog::warn("cannot raise the descriptor limit from {} to {}: {}", limit.rlim_cur, limit.rlim_max,
                   std::strerror(errno));
    }
  }
  return limit.rlim_cur == RLIM_INFINITY ? (1U << 20) : static_cast<std::size_t>(limit.rlim_cur);
}

}  // namespace

int Daemon::run() {
  std::signal(SIGPIPE, SIG_IGN);
  m_fd_limit = raise_fd_limit();
  asio::io_context io(static_cast<int>(m_options.io_threads));
  source::Listeners listeners = source::open_listeners(io, m_options.stream, m_options.dgram);
  if (!listeners.stream && !listeners.dgram && m_options.watch_dirs.empty()) {
    throw source::StartupError("nothing to listen on: no socket (configured or passed by systemd) and no "
                               "watched directory");
  }

  StatusReporter status(m_options.db_path, proto::unix_now_us());
  BackendOptions backend_options;
  backend_options.db_path = m_options.db_path;
  backend_options.max_queue_bytes = m_options.max_queue_bytes;
  backend_options.max_line_bytes = m_options.max_line_bytes;
  backend_options.commit_interval = m_options.commit_interval;
  backend_options.status_interval = m_options.stats_interval;
  backend_options.idle_timeout = m_options.dgram_idle_timeout;
  backend_options.status_hook = [&status](db::Database& db) { status.write(db); };
  backend_options.retention.max_age = parse_duration(m_options.retention_max_age);
  backend_options.retention.max_db_bytes = m_options.retention_max_db_bytes;
  backend_options.per_uid_lines_per_second = m_options.per_uid_lines_per_second;
  backend_options.per_uid_sessions = m_options.per_uid_sessions;
  backend_options.redact_url_credentials = m_options.redact_url_credentials;
  Backend backend(backend_options);
  status.attach(backend);
  if (backend.setup().migrations_applied > 0) {
    spdlog::info("database {}: {} schema migrations applied", m_options.db_path,
                 backend.setup().migrations_applied);
  }
  if (backend.setup().sessions_marked_incomplete > 0) {
    spdlog::info("database {}: {} sessions left running by a previous run marked incomplete",
                 m_options.db_path, backend.setup().sessions_marked_incomplete);
  }

  ingest::LineFramer::Limits framing;
  framing.max_line_bytes = m_options.max_line_bytes;

  std::unique_ptr<ingest::IngestSink> stream_sink;
  std::unique_ptr<source::StreamServer> stream_server;
  if (listeners.stream) {
    stream_sink = backend.make_sink();
    source::StreamServer::Options options;
    options.framing = framing;
    options.overflow_wait = m_options.overflow_wait;
    // Descriptors beyond the connections are kept for the database, trace
    // files and the listeners, so that one user's connections never leave
    // trace2d unable to accept anyone else's.
    options.max_connections = std::max<std::size_t>(16, m_fd_limit - std::min<std::size_t>(m_fd_limit / 4, 1024));
    // One uid may take all but what is kept for the others (a quarter, at
    // most 1024): a burst of one user's short processes is not cut short.
    options.max_connections_per_uid =
        m_options.per_uid_connections > 0
            ? m_options.per_uid_connections
            : options.max_connections - std::min<std::size_t>(options.max_connections / 4, 1024);
    options.silent_timeout = m_options.stream_silent_timeout;
    options.max_partial_bytes_per_uid = m_options.max_line_bytes + 64 * 1024;
    spdlog::info("stream: at most {} connections, {} per uid (descriptor limit {})", options.max_connections,
                 options.max_connections_per_uid, m_fd_limit);
    stream_server = std::make_unique<source::StreamServer>(io, std::move(*listeners.stream), *stream_sink, options);
    status.add_source({ingest::SourceKind::stream, listeners.stream_path, stream_sink.get(), {}, {}});
  }
  std::unique_ptr<ingest::IngestSink> dgram_sink;
  std::unique_ptr<source::DgramReceiver> dgram_receiver;
  if (listeners.dgram) {
    dgram_sink = backend.make_sink();
    source::DgramReceiver::Options options;
    options.receive_buffer = m_options.dgram_receive_buffer;
    options.max_line_bytes = m_options.max_line_bytes;
    options.overflow_wait = m_options.overflow_wait;
    dgram_receiver = std::make_unique<source::DgramReceiver>(std::move(*listeners.dgram), *dgram_sink, options);
    auto* receiver = dgram_receiver.get();
    status.add_source({ingest::SourceKind::dgram, listeners.dgram_path, dgram_sink.get(),
                       [receiver] { return receiver->kernel_drops(); }, {}});
  }
  auto dir_sink = backend.make_sink();
  const auto dir_options = [&](const DaemonOptions& options) {
    source::DirWatcher::Options o;
    o.dirs = options.watch_dirs;
    o.delete_finished = options.delete_finished_files;
    o.idle_timeout = options.dir_idle_timeout;
    o.max_silence = options.dir_max_silence;
    o.max_open_files_per_uid = options.dir_max_open_files_per_uid;
    o.max_open_files = options.dir_max_open_files;
    o.max_file_bytes = options.dir_max_file_bytes;
    o.framing = framing;
    return o;
  };
  source::DirWatcher dir_watcher(io, *dir_sink, m_options.db_path, dir_options(m_options));
  status.add_source({ingest::SourceKind::dir, join(m_options.watch_dirs), dir_sink.get(), {},
                     [&dir_watcher] { return dir_watcher.sentinels_seen(); }});

  backend.start();
  if (stream_server) {
    stream_server->start();
  }
  if (dgram_receiver) {
    dgram_receiver->start();
    spdlog::info("dgram socket {}: receive buffer {} bytes", listeners.dgram_path,
                 dgram_receiver->receive_buffer());
  }
  dir_watcher.start();

  bool stopping = false;
  asio::signal_set stop_signals(io, SIGINT, SIGTERM);
  asio::signal_set reload_signal(io, SIGHUP);
  stop_signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (ec) {
      return;
    }
    stopping = true;
    spdlog::info("received signal {}: stopping (grace {} ms)", signo, m_options.shutdown_grace.count());
    if (stream_server) {
      stream_server->stop(m_options.shutdown_grace);
    }
    if (dgram_receiver) {
      dgram_receiver->stop();
    }
    dir_watcher.stop();
    boost::system::error_code ignored;
    reload_signal.cancel(ignored);
  });
  std::function<void(const boost::system::error_code&, int)> on_reload =
      [&](const boost::system::error_code& ec, int) {
        if (ec || stopping) {
          return;
        }
        reload_signal.async_wait(on_reload);
        if (!m_reloader) {
          spdlog::info("SIGHUP: nothing to reload (no configuration)");
          return;
        }
        const std::optional<DaemonOptions> fresh = m_reloader();
        if (!fresh) {
          spdlog::error("SIGHUP: configuration invalid; keeping the running one");
          return;
        }
        if (fresh->watch_dirs != m_options.watch_dirs ||
            fresh->delete_finished_files != m_options.delete_finished_files ||
            fresh->dir_idle_timeout != m_options.dir_idle_timeout ||
            fresh->dir_max_silence != m_options.dir_max_silence ||
            fresh->dir_max_open_files_per_uid != m_options.dir_max_open_files_per_uid ||
            fresh->dir_max_open_files != m_options.dir_max_open_files ||
            fresh->dir_max_file_bytes != m_options.dir_max_file_bytes) {
          spdlog::info("SIGHUP: directories [{}] -> [{}], delete finished {} -> {}, idle timeout {} -> {} ms",
                       join(m_options.watch_dirs), join(fresh->watch_dirs), m_options.delete_finished_files,
                       fresh->delete_finished_files, m_options.dir_idle_timeout.count(),
                       fresh->dir_idle_timeout.count());
          dir_watcher.reconfigure(dir_options(*fresh));
        }
        if (fresh->dgram_idle_timeout != m_options.dgram_idle_timeout) {
          spdlog::info("SIGHUP: dgram idle timeout {} -> {} ms", m_options.dgram_idle_timeout.count(),
                       fresh->dgram_idle_timeout.count());
          backend.worker().set_idle_timeout(fresh->dgram_idle_timeout);
        }
        if (fresh->log_level != m_options.log_level && apply_log_level(fresh->log_level)) {
          spdlog::info("SIGHUP: log level {} -> {}", m_options.log_level, fresh->log_level);
        }
        if (fresh->db_path != m_options.db_path || fresh->stream.path != m_options.stream.path ||
            fresh->dgram.path != m_options.dgram.path || fresh->io_threads != m_options.io_threads ||
            fresh->max_queue_bytes != m_options.max_queue_bytes ||
            fresh->commit_interval != m_options.commit_interval ||
            fresh->max_line_bytes != m_options.max_line_bytes ||
            fresh->overflow_wait != m_options.overflow_wait) {
          spdlog::warn("SIGHUP: only directories, their idle timeout and deletion, the dgram idle timeout "
                       "and the log level change live; other changes wait for a restart");
        }
        // Only what changed live is recorded; the rest stays as it runs.
        m_options.watch_dirs = fresh->watch_dirs;
        m_options.delete_finished_files = fresh->delete_finished_files;
        m_options.dir_idle_timeout = fresh->dir_idle_timeout;
        m_options.dir_max_silence = fresh->dir_max_silence;
        m_options.dir_max_open_files_per_uid = fresh->dir_max_open_files_per_uid;
        m_options.dir_max_open_files = fresh->dir_max_open_files;
        m_options.dir_max_file_bytes = fresh->dir_max_file_bytes;
        m_options.dgram_idle_timeout = fresh->dgram_idle_timeout;
        m_options.log_level = fresh->log_level;
      };
  reload_signal.async_wait(on_reload);

  // Tell the user how to point git here: the preferred target first.
  std::vector<std::string> targets;
  if (stream_server) {
    targets.push_back("af_unix:stream:" + listeners.stream_path);
  }
  if (dgram_receiver) {
    targets.push_back("af_unix:dgram:" + listeners.dgram_path);
  }
  for (const auto& dir : m_options.watch_dirs) {
    targets.push_back(dir + "/");
  }
  spdlog::info("trace2d {} listening: {}; database {}", k_version, join(targets), m_options.db_path);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    std::printf("%sGIT_TRACE2_EVENT=%s\n", i == 0 ? "" : "# or: ", targets[i].c_str());
  }
  std::fflush(stdout);

  // --- systemd: READY=1, STOPPING=1, watchdog (see service_notifier.hpp; no-ops without NOTIFY_SOCKET) ---
  ServiceNotifier notifier;
  notifier.ready("listening: " + join(targets) + "; database " + m_options.db_path);
  // Healthy: nothing waits for the writer, or its loop still goes round:
  // committing, or retrying a busy or failing database (a restart would drop
  // what it holds and fix nothing). A writer stuck for good stops the pings.
  ServiceWatchdog watchdog(io, notifier, [&backend] {
    return backend.budget().used() == 0 || backend.writer().since_heartbeat() < std::chrono::seconds(3);
  });
  watchdog.start();
  // A set of its own: Asio calls every signal_set registered for a signal.
  asio::signal_set stop_notice(io, SIGINT, SIGTERM);
  stop_notice.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) {
      notifier.stopping();
      watchdog.stop();  // a pending timer would keep io.run() from returning
    }
  });
  // --- end systemd ---

  std::vector<std::thread> io_threads;
  for (unsigned i = 1; i < m_options.io_threads; ++i) {
    io_threads.emplace_back([&io] {
      pthread_setname_np(pthread_self(), "trace2d-io");
      io.run();
    });
  }
  // Runs until every source has stopped after a stop signal.
  io.run();
  for (auto& t : io_threads) {
    t.join();
  }
  backend.finish(m_options.store_give_up_after);

  const auto& counts = backend.worker().counters();
  spdlog::info(
      "stopped: {} lines, {} events stored, {} rejected, {} dropped at the memory bound, {} abandoned; "
      "peak queued {:.1f} MiB",
      counts.total(&pipeline::IngestCounters::PerSource::lines), backend.writer().committed_events(),
      counts.total(&pipeline::IngestCounters::PerSource::rejects),
      (stream_sink ? stream_sink->counters().dropped_lines.load() : 0) +
          (dgram_sink ? dgram_sink->counters().dropped_lines.load() : 0),
      backend.writer().abandoned_events(), static_cast<double>(backend.budget().peak()) / (1024.0 * 1024.0));
  return backend.writer().abandoned_events() == 0 ? 0 : 1;
}

}  // namespace trace2d::app
