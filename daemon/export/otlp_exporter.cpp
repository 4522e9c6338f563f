#include "daemon/export/otlp_exporter.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <map>
#include <random>
#include <stdexcept>
#include <unordered_set>

#include "daemon/export/gzip.hpp"
#include "db/otlp_queue.hpp"
#include "db/read_transaction.hpp"
#include "model/process_tree.hpp"
#include "model/tree_loader.hpp"
#include "otlp/otlp_json.hpp"
#include "otlp/otlp_protobuf.hpp"
#include "otlp/span_builder.hpp"

namespace trace2d::exporter {
namespace {

Endpoint endpoint_of(const std::string& url) {
  std::string error;
  auto endpoint = parse_endpoint(url, error);
  if (!endpoint) {
    throw std::invalid_argument("OTLP endpoint '" + url + "': " + error);
  }
  return *endpoint;
}

// ExportTraceServiceResponse { partial_success 1 { rejected_spans 1 } }:
// the spans the collector refused in an accepted request, from a protobuf
// answer (0 when there is none, or it cannot be read).
std::int64_t rejected_spans_in(std::string_view body) {
  const auto varint = [](std::string_view& in, std::uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
      const auto byte = static_cast<std::uint8_t>(in.front());
      in.remove_prefix(1);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        return true;
      }
    }
    return false;
  };
  std::uint64_t tag = 0;
  std::uint64_t length = 0;
  if (!varint(body, tag) || tag != ((1 << 3) | 2) || !varint(body, length) || length > body.size()) {
    return 0;
  }
  std::string_view partial = body.substr(0, length);
  std::uint64_t value = 0;
  while (!partial.empty() && varint(partial, tag)) {
    if ((tag & 7) == 0) {
      if (!varint(partial, value)) {
        return 0;
      }
      if ((tag >> 3) == 1) {
        return static_cast<std::int64_t>(value);
      }
    } else if ((tag & 7) == 2) {
      if (!varint(partial, length) || length > partial.size()) {
        return 0;
      }
      partial.remove_prefix(length);
    } else {
      return 0;
    }
  }
  return 0;
}

bool retryable(int status) { return status == 429 || status == 502 || status == 503 || status == 504; }

}  // namespace

OtlpExporter::OtlpExporter(std::string db_path, ExporterOptions options)
    : m_db_path(std::move(db_path)),
      m_options(std::move(options)),
      m_endpoint(endpoint_of(m_options.url)),
      m_resource(otlp::make_resource(m_options.resource)),
      m_scope{"trace2d", m_options.resource.trace2d_version},
      m_client(m_endpoint, m_options.timeout, m_options.tls) {}

OtlpExporter::~OtlpExporter() { stop(); }

void OtlpExporter::start() {
  m_thread = std::thread([this] {
    pthread_setname_np(pthread_self(), "trace2d-otlp");
    run();
  });
}

void OtlpExporter::stop() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  m_client.abort();
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

bool OtlpExporter::wait_for(std::chrono::milliseconds delay) {
  std::unique_lock lock(m_mutex);
  m_wake.wait_for(lock, delay, [this] { return m_stopping; });
  return !m_stopping;
}

void OtlpExporter::run() {
  spdlog::info("otlp: exporting finished process trees to {} ({}{})", m_options.url,
               m_options.json ? "http/json" : "http/protobuf", m_options.gzip ? ", gzip" : "");
  auto last_prune = std::chrono::steady_clock::time_point{};
  auto last_count = std::chrono::steady_clock::time_point{};
  while (true) {
    try {
      db::Database db(m_db_path, db::OpenMode::read_write_create);
      db.set_busy_timeout(10000);
      while (true) {
        db::set_export_enabled(db, true, m_options.url);  // again after a recreated database
        if (std::chrono::steady_clock::now() - last_prune >= std::chrono::minutes(1)) {
          last_prune = std::chrono::steady_clock::now();
          if (const std::int64_t pruned = db::drop_pruned(db); pruned > 0) {
            spdlog::warn("otlp: {} queued sessions were pruned by retention before they could be exported", pruned);
          }
        }
        const bool sent = export_round(db);
        // Counted here, on the exporter's connection, so that /metrics
        // never reads the database on an io thread.
        if (std::chrono::steady_clock::now() - last_count >= std::chrono::seconds(1)) {
          last_count = std::chrono::steady_clock::now();
          m_backlog_sessions.store(db::export_backlog(db).sessions);
        }
        if (!wait_for(sent && m_backoff.count() == 0 ? std::chrono::milliseconds(0)
                                                     : std::max(m_options.poll, m_backoff))) {
          return;
        }
      }
    } catch (const std::exception& e) {
      m_failures.fetch_add(1);
      spdlog::error("otlp: {}; trying again in 5 s", e.what());
      if (!wait_for(std::chrono::seconds(5))) {
        return;
      }
    }
  }
}

std::vector<OtlpExporter::SessionSpans> OtlpExporter::build(db::Database& db, std::vector<std::int64_t>& withheld) {
  const std::vector<db::PendingSession> pending = db::next_pending(db, m_options.max_sessions_per_request);
  std::map<std::string, std::vector<std::int64_t>> by_root;
  for (const db::PendingSession& p : pending) {
    by_root[p.root_sid].push_back(p.session_id);
  }
  std::vector<SessionSpans> batch;
  std::size_t spans = 0;
  for (const auto& [root, sessions] : by_root) {
    if (spans >= m_options.max_spans_per_request) {
      break;  // the rest next round
    }
    model::LoadOptions load;
    load.errors = true;
    load.params = true;
    load.annotations = true;
    std::vector<model::ProcessRows> rows;
    {
      const db::ReadTransaction snapshot(db);
      rows = model::load_process_rows(db, root, load);
    }
    const model::ProcessTree tree = model::build_process_tree(root, std::move(rows));
    for (const std::int64_t id : sessions) {
      SessionSpans session{id, {}};
      const otlp::BuildStats stats = otlp::append_spans(
          tree, session.spans, [id](const model::ProcessInfo& process) { return process.session_id == id; },
          m_options.rules);
      if (stats.dropped > 0 && session.spans.empty()) {
        withheld.push_back(id);
        continue;
      }
      // One session may hold any number of regions (anyone can send them):
      // a request stays bounded, the process span first, and says how many
      // were left out.
      if (session.spans.size() > m_options.max_spans_per_request) {
        const std::size_t left_out = session.spans.size() - m_options.max_spans_per_request;
        session.spans.resize(m_options.max_spans_per_request);
        session.spans.front().attributes.push_back(
            {"trace2d.spans_left_out", static_cast<std::int64_t>(left_out)});
      }
      spans += session.spans.size();
      batch.push_back(std::move(session));
    }
  }
  return batch;
}

bool OtlpExporter::export_round(db::Database& db) {
  std::vector<std::int64_t> withheld;
  std::vector<SessionSpans> batch = build(db, withheld);
  if (!withheld.empty()) {
    db::withhold(db, withheld);
  }
  if (batch.empty()) {
    return !withheld.empty();
  }
  const Delivery delivery = deliver(db, batch);
  return delivery == Delivery::acknowledged || delivery == Delivery::dropped;
}

OtlpExporter::Delivery OtlpExporter::deliver(db::Database& db, std::vector<SessionSpans>& batch) {
  std::vector<std::int64_t> ids;
  otlp::TraceBatch request{&m_resource, &m_scope, {}};
  for (SessionSpans& session : batch) {
    ids.push_back(session.session_id);
    request.spans.insert(request.spans.end(), session.spans.begin(), session.spans.end());
  }
  if (request.spans.empty()) {
    db::acknowledge(db, ids, 0, 0);  // nothing to send (a session without a process node): done
    return Delivery::acknowledged;
  }
  std::string body;
  if (m_options.json) {
    otlp::append_json_request(body, request);
  } else {
    otlp::append_protobuf_request(body, request);
  }
  HttpClient::Headers headers = m_options.headers;
  headers.emplace_back("Content-Type", m_options.json ? "application/json" : "application/x-protobuf");
  if (m_options.gzip) {
    body = gzip(body);
    headers.emplace_back("Content-Encoding", "gzip");
  }
  std::string reason;
  std::optional<std::chrono::milliseconds> retry_after;
  try {
    const HttpResponse response = m_client.post(headers, std::move(body));
    if (response.status >= 200 && response.status < 300) {
      const std::int64_t rejected = m_options.json ? 0 : rejected_spans_in(response.body);
      db::acknowledge(db, ids, static_cast<std::int64_t>(request.spans.size()), rejected);
      m_exported_spans.fetch_add(request.spans.size());
      m_backoff = std::chrono::milliseconds(0);
      if (rejected > 0) {
        spdlog::warn("otlp: the collector accepted the request but rejected {} of its {} spans", rejected,
                     request.spans.size());
      }
      return Delivery::acknowledged;
    }
    if (response.status == 413 && batch.size() > 1) {
      // Too large as it is: each half on its own.
      std::vector<SessionSpans> second(std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2)),
                                       std::make_move_iterator(batch.end()));
      batch.resize(batch.size() / 2);
      const Delivery first = deliver(db, batch);
      if (first != Delivery::acknowledged && first != Delivery::dropped) {
        return first;
      }
      return deliver(db, second);
    }
    reason = "HTTP " + std::to_string(response.status) + " from " + m_options.url;
    if (!retryable(response.status)) {
      // Bad data (400), or one session too large (413): sending it again
      // cannot help. Counted and named, not retried.
      m_failures.fetch_add(1);
      spdlog::error("otlp: {} refused {} sessions for good: {}", m_options.url, ids.size(),
                    response.body.substr(0, 200));
      db::drop_pending(db, ids, reason);
      return Delivery::dropped;
    }
    if (response.retry_after) {
      retry_after = std::chrono::duration_cast<std::chrono::milliseconds>(*response.retry_after);
    }
  } catch (const TransportError& e) {
    reason = e.what();
  }
  {
    std::lock_guard lock(m_mutex);
    if (m_stopping) {
      return Delivery::stopping;
    }
  }
  m_failures.fetch_add(1);
  db::record_failure(db, reason);
  if (retry_after) {
    m_backoff = std::min(m_options.max_backoff, *retry_after);  // the collector says when
  } else {
    // Exponential from a second, with jitter so a fleet does not come back at once.
    static thread_local std::mt19937 random{std::random_device{}()};
    const auto base = std::max(std::chrono::milliseconds(1000), m_backoff * 2);
    m_backoff = std::min(m_options.max_backoff,
                         std::chrono::milliseconds(static_cast<std::int64_t>(
                             static_cast<double>(base.count()) * std::uniform_real_distribution<>(0.8, 1.2)(random))));
  }
  spdlog::warn("otlp: {}; trying again in {} ms ({} sessions wait)", reason, m_backoff.count(), ids.size());
  return Delivery::retry_later;
}

}  // namespace trace2d::exporter
