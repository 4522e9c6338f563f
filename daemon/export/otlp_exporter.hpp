#pragma once
// The OTLP exporter: a consumer of committed sessions, on its own thread and
// its own database connection, never on the ingest path. Each round it takes
// queued sessions that have finished, the senders (uids) taking turns
// (db/otlp_queue.hpp), builds their spans from their places in their
// process trees (model::load_export_rows, otlp/span_builder.hpp), and sends
// them to the collector through a transport (transport.hpp: OTLP/HTTP,
// protobuf or JSON, or OTLP/gRPC; gzip optional), blocking only this
// thread. A session leaves the queue only when the collector accepted it,
// or rejected it in a way sending it again cannot change (malformed; too
// large for a single session): dropped, counted by reason. Any other
// answer, or none, pauses the export and keeps the queue
// (delivery_policy.hpp): a wrong token or path loses nothing, and fixing it
// delivers everything. So a restart, a crash or a collector outage neither
// loses nor repeats what was acknowledged; a request in flight at SIGTERM
// gets a bounded wait for its answer, and one cut off is sent again
// (delivery is at least once). Retries wait for the collector's Retry-After
// (RetryInfo) or back off exponentially with jitter; the queue waits in the
// database meanwhile, so memory stays bounded by one request, whose sessions
// are bounded in number, likely spans and stored bytes.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/export/delivery_policy.hpp"
#include "daemon/export/http_client.hpp"
#include "daemon/export/transport.hpp"
#include "daemon/settings/setting.hpp"
#include "db/otlp_queue.hpp"
#include "db/sqlite.hpp"
#include "model/process_tree.hpp"
#include "model/tree_loader.hpp"
#include "otlp/export_rules.hpp"
#include "otlp/resource.hpp"
#include "otlp/span.hpp"

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
  std::size_t max_sessions_per_request = 256;
  std::size_t max_spans_per_request = 8192;
  // What one round loads, in the stored bytes of its sessions' events
  // (sessions.stored_bytes): their rows, spans and the request are made
  // from them, so this bounds the exporter's memory whatever the sessions
  // hold. A session over it goes alone.
  std::size_t max_bytes_per_request = 4 << 20;
  std::chrono::milliseconds poll{500};  // how often the queue is looked at when idle
  std::chrono::milliseconds max_backoff{60000};  // the longest wait between attempts (Retry-After wins)
  // At stop(), how long a request in flight may take to be answered, so
  // that an acknowledged request is not sent again after a restart.
  std::chrono::milliseconds shutdown_wait{5000};
  otlp::ResourceSettings resource;
  otlp::ExportRules rules;  // detail levels, nickname, important data
  std::function<void()> on_thread_start;  // run first on the exporter's thread (its scheduling policy)

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
                  "With outcome_detail: a run slower than its command's p99 (last 7 days) is slow"},
              o.rules.slow_by_p99);
    v.integer(
        Key{"otlp", "batch_max_sessions", "--otlp-batch-max-sessions", "N", "Sessions in one export request at most"},
        o.max_sessions_per_request, Range{1, 65536});
    v.integer(Key{"otlp", "batch_max_spans", "--otlp-batch-max-spans", "N",
                  "Spans in one export request at most (a bigger session sends its first ones)"},
              o.max_spans_per_request, Range{64, 1 << 20});
    v.integer(Key{"otlp", "batch_max_stored_mib", "--otlp-batch-max-stored-mib", "MIB",
                  "Stored bytes of the sessions one export request is made from, at most (the exporter's memory)"},
              o.max_bytes_per_request, Range{1, 1024, settings::k_mib});
    v.integer(Key{"otlp", "max_backoff_ms", "--otlp-max-backoff-ms", "MS",
                  "Longest wait between export attempts while the collector fails (Retry-After wins)"},
              o.max_backoff, Range{100, k_hour_ms});
    v.integer(Key{"otlp", "shutdown_wait_ms", "--otlp-shutdown-wait-ms", "MS",
                  "On SIGTERM, wait this long for the answer to an export request in flight"},
              o.shutdown_wait, Range{0, 60000});
  }
};

class OtlpExporter {
 public:
  // Throws std::invalid_argument for a URL, a header or a TLS file it
  // cannot use.
  OtlpExporter(std::string db_path, ExporterOptions options);
  ~OtlpExporter();
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  void start();
  // Ends the thread: no new request starts; a request in flight gets up to
  // `shutdown_wait` for its answer (and its acknowledgement is committed),
  // then is aborted. What is not acknowledged stays queued for the next run.
  void stop();

  [[nodiscard]] std::uint64_t exported_spans() const { return m_exported_spans.load(); }
  [[nodiscard]] std::uint64_t failures() const { return m_failures.load(); }
  // True while the latest attempt failed and the export waits to try again.
  [[nodiscard]] bool paused() const { return m_paused.load(); }
  // The queue and the export's totals at the last count (about every
  // second, also while the export is paused).
  [[nodiscard]] db::ExportHealth health() const;

 private:
  struct SessionSpans {
    std::int64_t session_id = 0;
    std::vector<otlp::Span> spans;
  };
  enum class Delivery { acknowledged, dropped, retry_later, stopping };
  // A round takes at most max_sessions_per_request / this of one uid's
  // sessions, so at least this many uids have a turn in every round.
  static constexpr std::size_t k_uids_per_round = 8;

  void run();
  // One round: true when it sent something (more may wait).
  bool export_round(db::Database& db, model::ExportRowLoader& loader);
  // The spans of the next queued sessions; `withheld` gets the sessions
  // a detail rule dropped (no spans to send: they leave the queue, counted).
  // The spans are views of the trees they were built from, which `trees`
  // gets: the caller keeps it until the spans are delivered (a 413's
  // halves are encoded again from the same spans).
  std::vector<SessionSpans> build(db::Database& db, model::ExportRowLoader& loader,
                                  std::vector<std::int64_t>& withheld, std::vector<model::ProcessTree>& trees);
  Delivery deliver(db::Database& db, std::vector<SessionSpans>& batch);
  // Sends unless stopping (nullopt then: nothing was sent), marking the
  // request in flight for stop(). Throws TransportError.
  std::optional<CollectorAnswer> send(std::string& body);
  bool wait_for(std::chrono::milliseconds delay);  // false: stopping
  void count(db::Database& db);  // health(), from the database

  std::string m_db_path;
  ExporterOptions m_options;
  otlp::Resource m_resource;
  otlp::Scope m_scope;
  std::unique_ptr<Transport> m_transport;
  std::thread m_thread;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stopping = false;
  bool m_in_flight = false;  // a request was sent and its answer is awaited (under m_mutex)
  Backoff m_backoff;
  // The uid whose turn comes first in the next round (db::next_pending).
  std::int64_t m_next_uid = 0;
  // The last request's body, whose memory the next one is written into
  // (deliver()). On the exporter's thread only.
  std::string m_body;
  std::atomic<std::uint64_t> m_exported_spans{0};
  std::atomic<std::uint64_t> m_failures{0};
  std::atomic<bool> m_paused{false};
  mutable std::mutex m_health_mutex;
  db::ExportHealth m_health;  // under m_health_mutex: a scrape reads it on an io thread
};

}  // namespace trace2d::exporter
