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
#include "daemon/ingest/line_framer.hpp"
#include "daemon/source/dir_watcher.hpp"
#include "daemon/source/socket_options.hpp"
#include "daemon/stitch/stitcher.hpp"

namespace trace2d::app {

struct DaemonOptions {
  std::string db_path;
  source::SocketOptions stream;
  source::SocketOptions dgram;
  std::size_t dgram_receive_buffer = 8 * 1024 * 1024;
  // A dgram session has no EOF: without a terminal event for this long it is incomplete.
  std::chrono::milliseconds dgram_idle_timeout{std::chrono::minutes(5)};
  // The trace-directory watcher's settings ([directories]), with the
  // defaults it declares (daemon/source/dir_watcher.hpp); its framing is
  // max_line_bytes'.
  source::DirWatcher::Options directories;
  unsigned io_threads = 1;
  std::size_t max_queue_bytes = 16 * 1024 * 1024;
  std::chrono::milliseconds overflow_wait{2000};
  std::size_t max_line_bytes = ingest::k_default_max_line_bytes;
  std::chrono::milliseconds shutdown_grace{2000};
  std::chrono::milliseconds commit_interval{100};
  std::chrono::milliseconds store_give_up_after{30000};  // at shutdown, on a failing database
  std::chrono::milliseconds stats_interval{2000};
  std::string log_level = "info";
  std::string log_target = "stderr";  // stderr, journal, or an absolute file path
  // The rate valve: lines one uid may send per second (0: no valve) while
  // it presses on the pipeline (holds its share of the memory bound);
  // beyond it, lines are dropped and counted on their sessions and per
  // uid. A safety valve, not the fairness (that is the memory shares):
  // high enough that one busy host never meets it (trace2d ingests some
  // 470,000 events/s here, bench/RESULTS.md), and never applied while the
  // pipeline has room.
  std::uint64_t per_uid_lines_per_second = 1000000;
  // Stream connections one uid may hold open at once (0: all but a quarter,
  // at most 1024, of the connections trace2d allows itself, from its
  // descriptor limit: those are kept for the other uids).
  std::size_t per_uid_connections = 0;
  // The stitcher's settings (sessions and memory one uid may hold, the
  // storage rule), with the defaults it declares (daemon/stitch/stitcher.hpp);
  // its nickname_key is otlp_nickname_key's.
  stitch::Stitcher::Options stitcher;
  // A stream connection that sends nothing this long is closed: git writes
  // its first event as soon as it connects.
  std::chrono::milliseconds stream_silent_timeout{10000};
  // Retention: sessions and rejects older than this are pruned ("" keeps
  // everything), and while the database is larger than max_db_bytes (0: no
  // bound) the biggest sender's oldest data is. On by default, so that no
  // user can fill the disk for good.
  std::string retention_max_age = "30d";
  std::uint64_t retention_max_db_bytes = 10ULL << 30;
  // Percent of max_db_bytes freed once ingest is quiet, so that a burst is
  // stored without deleting at the same time (at least 1%).
  std::uint64_t retention_headroom_percent = 5;
  // Passwords in URLs (https://user:pass@host) are replaced before storage.
  bool redact_url_credentials = true;
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
  // Rules for what leaves the host (docs/otlp.md, "Rules").
  std::string otlp_detail = "verbose";           // commands no rule names
  std::vector<std::string> otlp_rules;           // "git:status=drop"
  std::string otlp_nickname_key = "otel.trace2.nickname";  // a def_param; also the sessions.nickname column
  std::vector<std::string> otlp_important_data;  // "category/key", verbatim at any level
  // trace2receiver's filter settings (docs/otlp.md, "Rules"): the def_param
  // naming a repository's ruleset or level, nicknames' rulesets or levels,
  // named rulesets; its summary and important events; its PII options, and
  // host.name on the resource (on by default, unlike the PII) are the
  // exporter's (below).
  std::string otlp_ruleset_key;                      // "" for none
  std::vector<std::string> otlp_nicknames;           // "monorepo=verbose", "big=rs:fetch"
  std::vector<std::string> otlp_rulesets;            // "rs:fetch git:fetch=verbose *=drop"
  std::vector<std::string> otlp_summary_messages;    // "field=prefix"
  std::vector<std::string> otlp_summary_regions;     // "category/label=count_field,time_field"
  std::vector<std::string> otlp_important_events;    // "field=category/key_prefix"
  // Detail by outcome (docs/otlp.md): failed and slow runs at least at this
  // level ("": off); slow is at least slow_ms (0: no fixed bound) or, with
  // the exporter's rules.slow_by_p99, slower than the command's p99.
  std::string otlp_outcome_detail;
  std::chrono::milliseconds otlp_slow{0};
  // The exporter's own settings, with the defaults it declares
  // (daemon/export/otlp_exporter.hpp): delivery (docs/otlp.md, "Delivery":
  // a request's bounds and timeout, the longest wait between attempts, how
  // long SIGTERM waits for the answer to a request in flight), and the
  // switches of its rules and resource. The settings above that need
  // parsing are turned into its other members where it is made
  // (daemon.cpp).
  exporter::ExporterOptions exporter;
  // The /metrics endpoint (docs/metrics.md): off while empty; a port alone
  // means loopback. Histograms for the regions listed ("category/label",
  // "category/*").
  std::string metrics_listen;
  std::vector<std::string> metrics_regions;
  // The command histogram's `repo` label: "none", "nickname" or "worktree".
  std::string metrics_repository_label = "none";
  // The query service (docs/security.md, "Per-user access"): trace2ctl for
  // users who may not read the database, on their own sessions. The socket
  // "" is trace2ctl.sock beside the stream socket; trace2ctl "" is the one
  // beside trace2d (or in ../bin).
  bool query_enabled = true;
  std::string query_socket;
  std::string query_trace2ctl;
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

// "90s", "15m", "12h", "30d", "2w" (a number alone is seconds); nullopt when
// the text is none of those.
[[nodiscard]] std::optional<std::chrono::seconds> parse_duration(std::string_view text);

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
