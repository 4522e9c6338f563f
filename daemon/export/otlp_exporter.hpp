#pragma once
// The OTLP exporter: the durable forwarder (forwarder.hpp: the queue, the
// senders' turns, a round's bounds, the collector's answer, backoff,
// acknowledgements, figures) with the OTLP backend (otlp_sender.hpp: spans
// from the process trees, under the export's rules, encoded as OTLP and
// sent over HTTP or gRPC). Its options are the export's settings.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "daemon/export/forwarder.hpp"
#include "daemon/export/http_client.hpp"
#include "daemon/settings/setting.hpp"
#include "otlp/export_rules.hpp"
#include "otlp/resource.hpp"

namespace trace2d::exporter {

// otlp.protocol: OTLP/HTTP with either encoding, or OTLP/gRPC.
enum class Protocol { http_protobuf, http_json, grpc };
[[nodiscard]] const char* to_string(Protocol protocol);

struct ExporterOptions {
  // http/*: the traces URL, as POSTed to ("http://host:4318/v1/traces");
  // grpc: the collector ("http://host:4317", https:// for TLS).
  std::string url;
  Protocol protocol = Protocol::http_protobuf;
  bool gzip = false;
  std::chrono::milliseconds timeout{10000};
  HttpClient::Headers headers;  // extra headers ("Authorization", ...); gRPC metadata for grpc
  TlsFiles tls;                 // for https
  std::optional<Proxy> proxy;   // the HTTP proxy the environment names for the endpoint (proxy.hpp)
  otlp::ResourceSettings resource;
  otlp::ExportRules rules;  // detail levels, nickname, important data
  // The forwarder's: a round's bounds (its units are spans), polling,
  // backoff, the wait at stop, the thread's start (its scheduling policy).
  ForwarderOptions forwarding;

  // The settings ([otlp], docs/configuration.md) that fill these members as
  // they are; the daemon makes the others from the [otlp] settings that
  // need parsing (daemon/app/daemon.cpp). `Self` is ExporterOptions or
  // const ExporterOptions.
  template <typename Self, typename Visitor>
  static void visit_settings(Self& o, Visitor& v) {
    using settings::k_hour_ms;
    using settings::Key;
    using settings::Range;
    v.integer(Key{"otlp", "timeout_ms", "--otlp-timeout-ms", "MS", "How long one export request may take"}, o.timeout,
              Range{100, 10 * 60 * 1000});
    v.boolean(
        Key{"otlp", "pii_user_name", "--otlp-pii-user-name", "", "Send the sender's user name (trace2.pii.username)"},
        o.rules.pii_user_name);
    v.boolean(Key{"otlp", "pii_host_name", "--otlp-pii-host-name", "",
                  "Send this host's name on each process span (trace2.pii.hostname)"},
              o.rules.pii_host_name);
    v.boolean(Key{"otlp", "resource_host_name", "--otlp-resource-host-name", "",
                  "Send this host's name on the resource (host.name)"},
              o.resource.include_host_name);
    v.boolean(Key{"otlp", "slow_p99", "--otlp-slow-p99", "",
                  "With outcome_detail: a run slower than its command's p99 (its sender's runs, last 7 days) is slow"},
              o.rules.slow_by_p99);
    v.integer(
        Key{"otlp", "batch_max_sessions", "--otlp-batch-max-sessions", "N", "Sessions in one export request at most"},
        o.forwarding.max_sessions_per_request, Range{1, 65536});
    v.integer(Key{"otlp", "batch_max_spans", "--otlp-batch-max-spans", "N",
                  "Spans in one export request at most (a bigger session sends its first ones)"},
              o.forwarding.max_units_per_request, Range{64, 1 << 20});
    v.integer(Key{"otlp", "batch_max_stored_mib", "--otlp-batch-max-stored-mib", "MIB",
                  "Stored bytes of the sessions one export request is made from, at most (two rounds in memory)"},
              o.forwarding.max_bytes_per_request, Range{1, 1024, settings::k_mib});
    v.integer(Key{"otlp", "max_backoff_ms", "--otlp-max-backoff-ms", "MS",
                  "Longest wait between export attempts while the collector fails (Retry-After wins)"},
              o.forwarding.max_backoff, Range{100, k_hour_ms});
    v.integer(
        Key{"otlp", "settle_ms", "--otlp-settle-ms", "MS",
            "A finished session is sent once quiet this long (10 min if it went on after its atexit); 0: at once"},
        o.forwarding.settle, Range{0, 600000});
    v.integer(Key{"otlp", "shutdown_wait_ms", "--otlp-shutdown-wait-ms", "MS",
                  "On SIGTERM, wait this long for the answer to an export request in flight"},
              o.forwarding.shutdown_wait, Range{0, 60000});
  }
};

class OtlpExporter final : public Forwarder {
 public:
  // Throws std::invalid_argument for a URL, a header or a TLS file it
  // cannot use.
  OtlpExporter(std::string db_path, const ExporterOptions& options);

  [[nodiscard]] std::uint64_t exported_spans() const { return delivered_units(); }
};

}  // namespace trace2d::exporter
