#include "daemon/app/daemon.hpp"

#include <pthread.h>

#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "daemon/app/backend.hpp"
#include "daemon/app/config_file.hpp"
#include "daemon/app/health_metrics.hpp"
#include "daemon/app/service_notifier.hpp"  // systemd (h-systemd)
#include "daemon/app/sources.hpp"
#include "daemon/app/status_reporter.hpp"
#include "daemon/export/otlp_exporter.hpp"
#include "daemon/export/proxy.hpp"
#include "daemon/app/thread_scheduling.hpp"
#include "daemon/metrics/duration_metrics.hpp"
#include "daemon/metrics/metrics_server.hpp"
#include "daemon/query/query_service.hpp"
#include "daemon/source/asio.hpp"
#include "daemon/source/listeners.hpp"
#include "proto/timestamp.hpp"
#include "trace2d/version.hpp"

namespace trace2d::app {

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

BackendOptions backend_options(const DaemonOptions& options, StatusReporter& status,
                               metrics::DurationMetrics* durations) {
  BackendOptions o;
  o.db_path = options.db_path;
  o.max_queue_bytes = options.max_queue_bytes;
  o.max_line_bytes = options.max_line_bytes;
  o.writer = options.store_writer;
  o.writer.status_hook = [&status](db::Database& db) { status.write(db); };
  o.writer.retention = options.retention.options();
  o.worker = options.ingest_worker;
  o.stitcher = options.stitcher;
  o.stitcher.nickname_key = options.export_rules.nickname_key;
  o.batch_scheduling = options.batch_scheduling;
  o.export_url = otlp_export_url(options);
  if (durations != nullptr) {
    o.consumers.push_back(durations);
  }
  return o;
}

// The /metrics histograms, when the endpoint is on (the settings were
// checked when the configuration was read).
std::unique_ptr<metrics::DurationMetrics> make_duration_metrics(const DaemonOptions& options) {
  if (!options.metrics.enabled()) {
    return nullptr;
  }
  try {
    return std::make_unique<metrics::DurationMetrics>(options.metrics.duration_options());
  } catch (const std::invalid_argument& e) {
    throw source::StartupError(e.what());
  }
}

std::unique_ptr<metrics::MetricsServer> make_metrics_server(asio::io_context& io, const DaemonOptions& options,
                                                            HealthFigures figures) {
  if (!options.metrics.enabled()) {
    return nullptr;
  }
  std::string error;
  const auto at = metrics::parse_listen_address(options.metrics.listen, error);
  if (!at) {
    throw source::StartupError("metrics.listen: " + error);
  }
  try {
    auto server = std::make_unique<metrics::MetricsServer>(
        io, *at, [figures = std::move(figures)](metrics::Format format) { return render_metrics(figures, format); });
    const auto bound = server->local_endpoint();
    spdlog::info("metrics: serving http://{}:{}/metrics",
                 bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string(),
                 bound.port());
    return server;
  } catch (const std::system_error& e) {
    throw source::StartupError(e.what());
  }
}

// The exporter, when an endpoint is configured: started once the backend
// runs, stopped before it finishes (its queue waits in the database).
std::unique_ptr<exporter::OtlpExporter> make_exporter(const DaemonOptions& options) {
  exporter::ExporterOptions o = options.exporter;  // the settings it declares, as configured
  o.url = otlp_export_url(options);
  if (o.url.empty()) {
    return nullptr;
  }
  o.protocol = options.otlp_protocol == "grpc"        ? exporter::Protocol::grpc
               : options.otlp_protocol == "http/json" ? exporter::Protocol::http_json
                                                      : exporter::Protocol::http_protobuf;
  o.gzip = options.otlp_compression == "gzip";
  for (const std::string& header : options.otlp_headers) {
    const auto equals = header.find('=');
    o.headers.emplace_back(header.substr(0, equals), header.substr(equals + 1));
  }
  o.tls = exporter::TlsFiles{options.otlp_ca_file, options.otlp_client_cert, options.otlp_client_key};
  // gRPC reads the proxy variables itself (grpc_proxy, https_proxy,
  // http_proxy; no_grpc_proxy, no_proxy: docs/configuration.md).
  std::string error;
  const auto endpoint = o.protocol == exporter::Protocol::grpc ? std::nullopt : exporter::parse_endpoint(o.url, error);
  if (endpoint) {
    try {
      o.proxy = exporter::proxy_for(*endpoint, exporter::ProxyEnvironment::of_process());
    } catch (const std::invalid_argument& e) {
      throw source::StartupError(std::string("otlp: ") + e.what());
    }
    if (o.proxy) {
      spdlog::info("otlp: through the proxy {} (from the environment; no_proxy does not name {})",
                   o.proxy->address(), endpoint->host);
    }
  }
  o.resource = otlp::resource_settings_from_environment();
  o.resource.include_host_name = options.exporter.resource.include_host_name;
  options.export_rules.apply(o.rules);  // the configuration's checks refused bad entries already
  o.forwarding.on_thread_start = [batch = options.batch_scheduling] {
    use_background_scheduling(batch, "trace2d-otlp");
  };
  return std::make_unique<exporter::OtlpExporter>(options.db_path, std::move(o));
}

// The query service, unless it is off. Its socket goes beside the stream
// socket (the directory systemd or the configuration made for sockets).
std::unique_ptr<query::QueryService> make_query_service(const DaemonOptions& options,
                                                        const source::Listeners& listeners) {
  if (!options.query.enabled) {
    return nullptr;
  }
  query::QueryServiceOptions o;
  o.db_path = options.db_path;
  o.socket_path = options.query.socket;
  if (o.socket_path.empty()) {
    const std::string beside = !listeners.stream_path.empty() ? listeners.stream_path
                               : !listeners.dgram_path.empty() ? listeners.dgram_path
                                                                : default_socket_path();
    o.socket_path = (std::filesystem::path(beside).parent_path() / "trace2ctl.sock").string();
    if (o.socket_path.size() > source::k_max_socket_path) {
      spdlog::warn("query service off: '{}' is too long for a socket; set query.socket", o.socket_path);
      return nullptr;
    }
  }
  o.trace2ctl_path = options.query.trace2ctl.empty() ? query::default_trace2ctl_path() : options.query.trace2ctl;
  if (o.trace2ctl_path.empty()) {
    spdlog::warn("query service off: no trace2ctl beside trace2d (set query.trace2ctl); users who may not read "
                 "the database cannot see their sessions");
    return nullptr;
  }
  return std::make_unique<query::QueryService>(std::move(o));
}

void log_database_setup(const std::string& path, const db::SetupReport& setup) {
  if (setup.migrations_applied > 0) {
    spdlog::info("database {}: {} schema migrations applied", path, setup.migrations_applied);
  }
  if (setup.sessions_marked_incomplete > 0) {
    spdlog::info("database {}: {} sessions left running by a previous run marked incomplete", path,
                 setup.sessions_marked_incomplete);
  }
}

// Tells the user how to point git here: the preferred target first.
void announce(const std::vector<std::string>& targets, const std::string& db_path) {
  spdlog::info("trace2d {} listening: {}; database {}", k_version, comma_list(targets), db_path);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    std::printf("%sGIT_TRACE2_EVENT=%s\n", i == 0 ? "" : "# or: ", targets[i].c_str());
  }
  std::fflush(stdout);
}

int report_shutdown(Backend& backend) {
  const auto& counts = backend.worker().counters();
  spdlog::info(
      "stopped: {} lines, {} events stored, {} rejected, {} dropped (past a uid's memory share or by the rate "
      "valve: uid_stats.dropped), {} abandoned; peak queued {:.1f} MiB",
      counts.total(&pipeline::IngestCounters::PerSource::lines), backend.writer().committed_events(),
      counts.total(&pipeline::IngestCounters::PerSource::rejects),
      counts.total(&pipeline::IngestCounters::PerSource::dropped),
      backend.writer().abandoned_events(), static_cast<double>(backend.budget().peak()) / (1024.0 * 1024.0));
  return backend.writer().abandoned_events() == 0 ? 0 : 1;
}

}  // namespace

void Daemon::reload(Sources& sources, Backend& backend) {
  if (!m_reloader) {
    spdlog::info("SIGHUP: nothing to reload (no configuration)");
    return;
  }
  const std::optional<DaemonOptions> fresh = m_reloader();
  if (!fresh) {
    spdlog::error("SIGHUP: configuration invalid; keeping the running one");
    return;
  }
  const ReloadPlan plan = plan_reload(m_options, *fresh);
  if (!plan.need_restart.empty()) {
    spdlog::warn("SIGHUP: changed, but applied only at a restart: {}", comma_list(plan.need_restart));
  }
  if (plan.applied.empty()) {
    if (plan.need_restart.empty()) {
      spdlog::info("SIGHUP: configuration unchanged");
    }
    return;
  }
  spdlog::info("SIGHUP: applying {}", comma_list(plan.applied));
  const auto changed = [&](std::string_view prefix) {
    return std::any_of(plan.applied.begin(), plan.applied.end(),
                       [&](const std::string& key) { return key.starts_with(prefix); });
  };
  if (changed("directories.")) {
    sources.reconfigure_directories(*fresh);
  }
  if (changed("dgram.idle_timeout_ms")) {
    backend.worker().set_idle_timeout(fresh->ingest_worker.idle_timeout);
  }
  if (changed("storage.drop")) {
    backend.worker().set_storage_drop(fresh->stitcher.storage_drop);
  }
  if (changed("log.level")) {
    apply_log_level(fresh->log_level);
  }
  apply_live_settings(m_options, *fresh);
}

int Daemon::run() {
  std::signal(SIGPIPE, SIG_IGN);
  m_fd_limit = raise_fd_limit();
  asio::io_context io(static_cast<int>(m_options.io_threads));
  source::Listeners listeners = source::open_listeners(io, m_options.stream, m_options.dgram);
  if (!listeners.stream && !listeners.dgram && m_options.directories.dirs.empty()) {
    throw source::StartupError("nothing to listen on: no socket (configured or passed by systemd) and no "
                               "watched directory");
  }

  StatusReporter status(m_options.db_path, proto::unix_now_us());
  // Before the backend, whose worker feeds it: destroyed after.
  std::unique_ptr<metrics::DurationMetrics> durations = make_duration_metrics(m_options);
  Backend backend(backend_options(m_options, status, durations.get()));
  status.attach(backend);
  log_database_setup(m_options.db_path, backend.setup());
  Sources sources(io, listeners, backend, status, m_options, m_fd_limit);
  std::unique_ptr<exporter::OtlpExporter> otlp_exporter = make_exporter(m_options);
  HealthFigures figures{backend, status, otlp_exporter != nullptr, {}, m_options.db_path};
  for (const metrics::FigureSource* component : {static_cast<const metrics::FigureSource*>(otlp_exporter.get()),
                                                 static_cast<const metrics::FigureSource*>(durations.get())}) {
    if (component != nullptr) {
      figures.components.push_back(component);
    }
  }
  std::unique_ptr<metrics::MetricsServer> metrics_server = make_metrics_server(io, m_options, std::move(figures));
  std::unique_ptr<query::QueryService> query_service = make_query_service(m_options, listeners);
  backend.start();
  sources.start();
  if (query_service) {
    query_service->start();
  }
  if (otlp_exporter) {
    otlp_exporter->start();
  }
  if (metrics_server) {
    metrics_server->start();
  }

  bool stopping = false;
  asio::signal_set stop_signals(io, SIGINT, SIGTERM);
  asio::signal_set reload_signal(io, SIGHUP);
  stop_signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (ec) {
      return;
    }
    stopping = true;
    spdlog::info("received signal {}: stopping (grace {} ms)", signo, m_options.shutdown_grace.count());
    sources.stop(m_options.shutdown_grace);
    if (metrics_server) {
      metrics_server->stop();  // its connections would keep io.run() going
    }
    boost::system::error_code ignored;
    reload_signal.cancel(ignored);
  });
  std::function<void(const boost::system::error_code&, int)> on_reload =
      [&](const boost::system::error_code& ec, int) {
        if (ec || stopping) {
          return;
        }
        reload_signal.async_wait(on_reload);
        reload(sources, backend);
      };
  reload_signal.async_wait(on_reload);

  const std::vector<std::string> targets = sources.targets();
  announce(targets, m_options.db_path);

  // --- systemd: READY=1, STOPPING=1, watchdog (see service_notifier.hpp; no-ops without NOTIFY_SOCKET) ---
  ServiceNotifier notifier;
  notifier.ready("listening: " + comma_list(targets) + "; database " + m_options.db_path);
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
  if (query_service) {
    query_service->stop();  // kills the queries still running
  }
  if (otlp_exporter) {
    otlp_exporter->stop();  // what it has not sent stays queued for the next run
  }
  backend.finish(m_options.store_give_up_after);
  return report_shutdown(backend);
}

}  // namespace trace2d::app
