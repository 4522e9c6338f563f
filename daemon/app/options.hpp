#pragma once
// Everything the daemon can be told, with its embedded defaults. Filled from
// the configuration file, then the command line (see config_file.hpp).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "daemon/export/otlp_exporter.hpp"
#include "daemon/export/rule_settings.hpp"
#include "daemon/ingest/line_framer.hpp"
#include "daemon/metrics/metrics_settings.hpp"
#include "daemon/pipeline/ingest_worker.hpp"
#include "daemon/query/query_service.hpp"
#include "daemon/settings/setting.hpp"
#include "daemon/source/dgram_receiver.hpp"
#include "daemon/source/dir_watcher.hpp"
#include "daemon/source/socket_file.hpp"
#include "daemon/source/socket_options.hpp"
#include "daemon/source/stream_reader.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "daemon/store/store_writer.hpp"

namespace trace2d::app {

struct DaemonOptions {
  std::string db_path;
  source::SocketOptions stream;
  source::SocketOptions dgram;
  // The components' own settings, with the defaults they declare beside
  // their members (docs/architecture.md, "Where to change what"); what
  // they share (the framing, the overflow wait, the nickname key) and what
  // the daemon derives (the bounds on connections) is set where they are made.
  store::StoreWriter::Options store_writer;       // commit interval, status interval
  pipeline::IngestWorker::Options ingest_worker;  // rate valve, redaction, dgram idle timeout
  source::StreamReader::Options stream_reader;    // silent timeout
  source::DgramReceiver::Options dgram_receiver;  // receive buffer
  // The trace-directory watcher's settings ([directories]), with the
  // defaults it declares (daemon/source/dir_watcher.hpp); its framing is
  // max_line_bytes'.
  source::DirWatcher::Options directories;
  unsigned io_threads = 1;
  std::size_t max_queue_bytes = 16 * 1024 * 1024;
  std::chrono::milliseconds overflow_wait{2000};
  std::size_t max_line_bytes = ingest::k_default_max_line_bytes;
  std::chrono::milliseconds shutdown_grace{2000};
  std::chrono::milliseconds store_give_up_after{30000};  // at shutdown, on a failing database
  std::string log_level = "info";
  std::string log_target = "stderr";  // stderr, journal, or an absolute file path
  // Stream connections one uid may hold open at once (0: all but a quarter,
  // at most 1024, of the connections trace2d allows itself, from its
  // descriptor limit: those are kept for the other uids).
  std::size_t per_uid_connections = 0;
  // The stitcher's settings (sessions and memory one uid may hold, the
  // storage rule), with the defaults it declares (daemon/stitch/stitcher.hpp);
  // its nickname_key is export_rules.nickname_key's.
  stitch::Stitcher::Options stitcher;
  store::RetentionSettings retention;  // by age and by size, on by default
  // The parse, store and export threads run under SCHED_BATCH
  // (thread_scheduling.hpp), so that git's threads go first.
  bool batch_scheduling = true;
  // OTLP export (docs/otlp.md): off while both endpoints are empty. Over
  // HTTP the endpoint is a base URL ("http://collector:4318"), to which
  // /v1/traces is appended unless it already ends so, as
  // OTEL_EXPORTER_OTLP_ENDPOINT; the traces endpoint is the URL POSTed to,
  // used as is, as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the SDK
  // specification's rule), and wins over the base. Over gRPC either is the
  // collector's address as is ("http://collector:4317"; https:// for TLS).
  std::string otlp_endpoint;
  std::string otlp_traces_endpoint;
  std::string otlp_protocol = "http/protobuf";  // or http/json, grpc
  std::string otlp_compression = "none";        // or gzip
  std::vector<std::string> otlp_headers;  // "name=value"
  // https: the CAs to trust ("": the system's), a client certificate and key.
  std::string otlp_ca_file;
  std::string otlp_client_cert;
  std::string otlp_client_key;
  // What leaves the host (docs/otlp.md, "Rules"), as written; made into
  // the exporter's rules where it is made (daemon.cpp). Its nickname_key is
  // the stitcher's too (the sessions.nickname column).
  exporter::RuleSettings export_rules;
  // The exporter's own settings, with the defaults it declares
  // (daemon/export/otlp_exporter.hpp): delivery (docs/otlp.md, "Delivery":
  // a request's bounds and timeout, the longest wait between attempts, how
  // long SIGTERM waits for the answer to a request in flight), and the
  // switches of its rules and resource. The settings above that need
  // parsing are turned into its other members where it is made
  // (daemon.cpp).
  exporter::ExporterOptions exporter;
  metrics::MetricsSettings metrics;  // the /metrics endpoint and its histograms (docs/metrics.md)
  query::QuerySettings query;        // the query service (docs/security.md, "Per-user access")

  // Every setting, in the order of the file: the daemon's own, declared
  // here beside their members (the ones it uses itself, shares between its
  // parts, or sets from the OTEL_* variables too), and each component's,
  // declared beside its options. `Self` is DaemonOptions or const
  // DaemonOptions; the visitor is daemon/settings/setting.hpp's.
  template <typename Self, typename Visitor>
  static void visit_settings(Self& o, Visitor& v) {
    using settings::absolute_path_or_empty;
    using settings::any_text;
    using settings::k_day_ms;
    using settings::k_hour_ms;
    using settings::k_mib;
    using settings::Key;
    using settings::not_empty;
    using settings::Range;
    using settings::Reload;
    using source::socket_path_problem;
    v.text(Key{"database", "path", "--db", "PATH", "SQLite database path"}, o.db_path, not_empty);
    store::StoreWriter::Options::visit_settings(o.store_writer, v);

    v.text(Key{"stream", "path", "--socket", "PATH", "Stream socket path (absolute; \"\": none)"}, o.stream.path,
           socket_path_problem);
    v.mode(Key{"stream", "mode", "--socket-mode", "MODE", "Permissions of the stream socket file (octal)"},
           o.stream.mode);
    v.text(Key{"stream", "owner", "--socket-owner", "USER", "Owner of the stream socket file (name or uid)"},
           o.stream.owner, source::socket_owner_problem);
    v.text(Key{"stream", "group", "--socket-group", "GROUP", "Group of the stream socket file (name or gid)"},
           o.stream.group, source::socket_group_problem);
    source::StreamReader::Options::visit_settings(o.stream_reader, v);

    v.text(Key{"dgram", "path", "--dgram-socket", "PATH", "Datagram socket path (absolute; \"\": none)"}, o.dgram.path,
           socket_path_problem);
    v.mode(Key{"dgram", "mode", "--dgram-socket-mode", "MODE", "Permissions of the datagram socket file (octal)"},
           o.dgram.mode);
    v.text(Key{"dgram", "owner", "--dgram-socket-owner", "USER", "Owner of the datagram socket file (name or uid)"},
           o.dgram.owner, source::socket_owner_problem);
    v.text(Key{"dgram", "group", "--dgram-socket-group", "GROUP", "Group of the datagram socket file (name or gid)"},
           o.dgram.group, source::socket_group_problem);
    source::DgramReceiver::Options::visit_settings(o.dgram_receiver, v);
    pipeline::IngestWorker::Options::visit_settings(o.ingest_worker, v);

    source::DirWatcher::Options::visit_settings(o.directories, v);

    v.integer(Key{"limits", "queue_max_mib", "--max-queue-mib", "MIB", "Memory for events read but not yet committed"},
              o.max_queue_bytes, Range{1, 1LL << 20, k_mib});
    v.integer(Key{"limits", "overflow_wait_ms", "--overflow-wait-ms", "MS",
                  "At the memory bound, pause reading this long before dropping"},
              o.overflow_wait, Range{0, k_hour_ms});
    v.integer(Key{"limits", "max_line_bytes", "--max-line-bytes", "BYTES",
                  "Longest event line accepted; longer lines are rejected"},
              o.max_line_bytes, Range{1024, 1LL << 30});
    v.integer(Key{"limits", "io_threads", "--io-threads", "N", "Threads reading sockets"}, o.io_threads, Range{1, 64});
    v.boolean(Key{"limits", "batch_scheduling", "--batch-scheduling", "",
                  "Run the parse, store and export threads under SCHED_BATCH, so git goes first"},
              o.batch_scheduling);
    v.integer(Key{"limits", "per_uid_connections", "--per-uid-connections", "N",
                  "Stream connections one uid may hold open (0: all but a share kept for other uids)"},
              o.per_uid_connections, Range{0, 1LL << 24});
    stitch::Stitcher::Options::visit_settings(o.stitcher, v);

    store::RetentionSettings::visit_settings(o.retention, v);

    v.integer(
        Key{"shutdown", "grace_ms", "--shutdown-grace-ms", "MS", "On SIGTERM, keep reading open connections this long"},
        o.shutdown_grace, Range{0, k_hour_ms});
    v.integer(Key{"shutdown", "give_up_after_ms", "--give-up-after-ms", "MS",
                  "On SIGTERM, stop retrying a failing database after this long"},
              o.store_give_up_after, Range{0, k_day_ms});

    v.text(Key{"otlp", "endpoint", "--otlp-endpoint", "URL",
               "OTLP collector to export process trees to; over HTTP a base URL: /v1/traces is appended (\"\": no "
               "export)"},
           o.otlp_endpoint, endpoint_problem);
    v.text(Key{"otlp", "traces_endpoint", "--otlp-traces-endpoint", "URL",
               "The collector's traces URL, used as is; wins over otlp.endpoint (\"\": none)"},
           o.otlp_traces_endpoint, traces_endpoint_problem);
    v.text(Key{"otlp", "protocol", "--otlp-protocol", "P",
               "http/protobuf, http/json or grpc (port 4317 when the endpoint names none)"},
           o.otlp_protocol, protocol_problem);
    v.text(Key{"otlp", "compression", "--otlp-compression", "C", "none or gzip"}, o.otlp_compression,
           compression_problem);
    v.list(Key{"otlp", "headers", "--otlp-header", "NAME=VALUE",
               "Extra request header, gRPC metadata over grpc (repeatable)"},
           o.otlp_headers, header_problem);
    v.text(Key{"otlp", "ca_file", "--otlp-ca-file", "PATH",
               "https (HTTP or gRPC): PEM file of the CAs to trust (\"\": the system's)"},
           o.otlp_ca_file, absolute_path_or_empty);
    v.text(Key{"otlp", "client_cert", "--otlp-client-cert", "PATH", "https: client certificate (PEM)"},
           o.otlp_client_cert, absolute_path_or_empty);
    v.text(Key{"otlp", "client_key", "--otlp-client-key", "PATH", "https: the client certificate's key (PEM)"},
           o.otlp_client_key, absolute_path_or_empty);
    exporter::RuleSettings::visit_settings(o.export_rules, v);
    exporter::ExporterOptions::visit_settings(o.exporter, v);

    metrics::MetricsSettings::visit_settings(o.metrics, v);

    query::QuerySettings::visit_settings(o.query, v);

    v.text(Key{"log", "level", "--log-level", "LEVEL", "trace, debug, info, warn, error, critical, off", Reload::live},
           o.log_level, log_level_problem);
    v.text(Key{"log", "target", "--log-target", "TARGET", "stderr, journal, or an absolute file path"}, o.log_target,
           log_target_problem);
  }

  // The checks of the daemon's own settings: the problem, or "" when fine.
  static std::string log_level_problem(const std::string& level);
  static std::string log_target_problem(const std::string& target);
  static std::string endpoint_problem(const std::string& url);         // a base: /v1/traces is appended
  static std::string traces_endpoint_problem(const std::string& url);  // POSTed to as it is
  static std::string protocol_problem(const std::string& protocol);
  static std::string compression_problem(const std::string& compression);
  static std::string header_problem(const std::string& header);
};

// The traces URL of a base endpoint (`otlp_endpoint`): /v1/traces appended.
[[nodiscard]] std::string otlp_traces_url(const std::string& endpoint);

// Where the exporter sends: the traces endpoint as it is, else the base
// endpoint's traces URL (over gRPC the base as it is); "" when the export
// is off.
[[nodiscard]] std::string otlp_export_url(const DaemonOptions& options);

// The OpenTelemetry SDK's variables, as defaults under the configuration
// file and the flags: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (otlp.traces_endpoint,
// used as is), OTEL_EXPORTER_OTLP_ENDPOINT (otlp.endpoint, a base),
// ..._HEADERS ("k=v,k2=v2", values percent-encoded), ..._COMPRESSION,
// ..._PROTOCOL (..._TRACES_PROTOCOL wins over it), ..._TIMEOUT (ms),
// ..._CERTIFICATE, ..._CLIENT_CERTIFICATE,
// ..._CLIENT_KEY (PEM files). Returns the settings it set, each with the
// variable that set it ("otlp.protocol" -> "OTEL_EXPORTER_OTLP_PROTOCOL"),
// so that a problem with one names where it came from.
using OtelSettings = std::map<std::string, std::string>;
OtelSettings apply_otel_environment(DaemonOptions& options);

// Socket paths for the user running the program: /run/trace2d/... for root,
// the XDG runtime directory for everyone else (the database's default path is
// db::default_db_path()).
[[nodiscard]] std::string default_socket_path();
[[nodiscard]] std::string default_dgram_socket_path();
// trace2d/trace2d.toml in the configured prefix's sysconfdir: /etc for the
// prefix /usr (the CMake cache variable TRACE2D_CONFIG_FILE).
[[nodiscard]] std::string default_config_path();

[[nodiscard]] DaemonOptions default_options();

// "a, b, c": lists of paths and keys in log lines.
[[nodiscard]] std::string comma_list(const std::vector<std::string>& items);

}  // namespace trace2d::app
