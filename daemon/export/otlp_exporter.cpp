#include "daemon/export/otlp_exporter.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "daemon/export/otlp_grpc_transport.hpp"
#include "daemon/export/otlp_http_transport.hpp"
#include "db/otlp_queue.hpp"
#include "db/read_transaction.hpp"
#include "model/command_percentiles.hpp"
#include "model/process_tree.hpp"
#include "model/tree_loader.hpp"
#include "otlp/otlp_json.hpp"
#include "otlp/otlp_protobuf.hpp"
#include "otlp/span_builder.hpp"

namespace trace2d::exporter {
namespace {

std::unique_ptr<Transport> make_transport(const ExporterOptions& options) {
  if (options.protocol == Protocol::grpc) {
    GrpcTransportOptions o;
    o.url = options.url;
    o.gzip = options.gzip;
    o.timeout = options.timeout;
    o.headers = options.headers;
    o.tls = options.tls;
    o.max_backoff = options.max_backoff;
    o.user_agent = "trace2d/" + options.resource.trace2d_version;
    return std::make_unique<OtlpGrpcTransport>(std::move(o));
  }
  HttpTransportOptions o;
  o.url = options.url;
  o.encoding = options.protocol == Protocol::http_json ? Encoding::json : Encoding::protobuf;
  o.gzip = options.gzip;
  o.timeout = options.timeout;
  o.headers = options.headers;
  o.tls = options.tls;
  o.proxy = options.proxy;
  return std::make_unique<OtlpHttpTransport>(std::move(o));
}

// A queued session's owner: its sender (the queue's -1 is none, an
// imported session's, though those are not queued).
model::Owner owner_of(const db::PendingSession& session) {
  return model::Owner{session.uid == -1 ? std::nullopt : std::optional<std::int64_t>(session.uid)};
}

}  // namespace

const char* to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::http_protobuf:
      return "http/protobuf";
    case Protocol::http_json:
      return "http/json";
    case Protocol::grpc:
      return "grpc";
  }
  return "?";
}

OtlpExporter::OtlpExporter(std::string db_path, ExporterOptions options)
    : m_db_path(std::move(db_path)),
      m_options(std::move(options)),
      m_resource(otlp::make_resource(m_options.resource)),
      m_scope{"trace2d", m_options.resource.trace2d_version},
      m_transport(make_transport(m_options)),
      m_backoff(m_options.max_backoff) {}

OtlpExporter::~OtlpExporter() { stop(); }

void OtlpExporter::start() {
  m_thread = std::thread([this] {
    pthread_setname_np(pthread_self(), "trace2d-otlp");
    if (m_options.on_thread_start) {
      m_options.on_thread_start();
    }
    run();
  });
}

void OtlpExporter::stop() {
  {
    std::unique_lock lock(m_mutex);
    m_stopping = true;
    m_wake.notify_all();
    // An answer to the request in flight may be on its way: waiting for it
    // (bounded) lets its acknowledgement be committed, where aborting sent
    // its sessions again after the restart.
    if (!m_wake.wait_for(lock, m_options.shutdown_wait, [this] { return !m_in_flight; })) {
      spdlog::warn("otlp: stopping: no answer from {} within {} ms; the request is abandoned, and its sessions, "
                   "still queued, are sent again at the next start",
                   m_options.url, m_options.shutdown_wait.count());
    }
  }
  m_transport->abort();
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

db::ExportHealth OtlpExporter::health() const {
  std::lock_guard lock(m_health_mutex);
  return m_health;
}

void OtlpExporter::count(db::Database& db) {
  db::ExportHealth health = db::export_health(db);
  std::lock_guard lock(m_health_mutex);
  m_health = std::move(health);
}

bool OtlpExporter::wait_for(std::chrono::milliseconds delay) {
  std::unique_lock lock(m_mutex);
  m_wake.wait_for(lock, delay, [this] { return m_stopping; });
  return !m_stopping;
}

std::optional<CollectorAnswer> OtlpExporter::send(std::string& body) {
  {
    std::lock_guard lock(m_mutex);
    if (m_stopping) {
      return std::nullopt;  // no new request once stopping: it could not be waited for
    }
    m_in_flight = true;
  }
  // Cleared however the request ends (answered, failed, aborted), and
  // stop() told.
  struct Landed {
    OtlpExporter& exporter;
    ~Landed() {
      {
        std::lock_guard lock(exporter.m_mutex);
        exporter.m_in_flight = false;
      }
      exporter.m_wake.notify_all();
    }
  } landed{*this};
  return m_transport->send(body);
}

void OtlpExporter::run() {
  spdlog::info("otlp: exporting finished process trees to {} ({}{})", m_options.url, to_string(m_options.protocol),
               m_options.gzip ? ", gzip" : "");
  auto last_count = std::chrono::steady_clock::time_point{};
  while (true) {
    try {
      db::Database db(m_db_path, db::OpenMode::read_write_create);
      db.set_busy_timeout(10000);
      // The exporter's commits (the queue's acknowledgements, a round's
      // counters) are as durable as the writer's: synchronous = NORMAL,
      // which in WAL mode survives a crash of the daemon. An OS crash may
      // lose the last acknowledgement, and its sessions are sent again, as
      // when the daemon stops between the collector's answer and the
      // commit: nothing is lost. SQLite's default, FULL, waited for an
      // fdatasync of the WAL every round: a fifth of the time export_bench
      // took (bench/README.md, "Export").
      db.exec("PRAGMA synchronous = NORMAL");
      model::LoadOptions load;
      load.errors = true;
      load.params = true;
      load.annotations = true;
      load.details = true;  // trace2receiver's ancestry, alias, repo set, printf messages
      model::ExportRowLoader loader(db, load);
      auto last_percentiles = std::chrono::steady_clock::time_point{};
      while (true) {
        db::set_export_enabled(db, true, m_options.url);  // again after a recreated database
        // Detail by outcome's p99s, read again every ten minutes: a bounded
        // window of runs (model/command_percentiles.hpp), never per round.
        if (m_options.rules.outcome_level && m_options.rules.slow_by_p99 &&
            (last_percentiles == std::chrono::steady_clock::time_point{} ||
             std::chrono::steady_clock::now() - last_percentiles >= std::chrono::minutes(10))) {
          last_percentiles = std::chrono::steady_clock::now();
          m_options.rules.command_p99 = model::command_p99(db);
        }
        const bool sent = export_round(db, loader);
        const std::chrono::milliseconds delay = sent && m_backoff.current().count() == 0
                                                    ? std::chrono::milliseconds(0)
                                                    : std::max(m_options.poll, m_backoff.current());
        // Counted here, on the exporter's connection, so that /metrics
        // never reads the database on an io thread; also while a backoff
        // waits (up to a minute), so that the figures stay current.
        const auto until = std::chrono::steady_clock::now() + delay;
        do {
          if (std::chrono::steady_clock::now() - last_count >= std::chrono::seconds(1)) {
            last_count = std::chrono::steady_clock::now();
            count(db);
          }
          const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
          if (!wait_for(std::clamp(left, std::chrono::milliseconds(0), std::chrono::milliseconds(1000)))) {
            return;
          }
        } while (std::chrono::steady_clock::now() < until);
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

std::vector<OtlpExporter::SessionSpans> OtlpExporter::build(db::Database& db, model::ExportRowLoader& loader,
                                                            std::vector<std::int64_t>& withheld,
                                                            std::vector<model::ProcessTree>& trees_built) {
  const std::size_t per_uid = std::max<std::size_t>(1, m_options.max_sessions_per_request / k_uids_per_round);
  db::PendingTurn turn = db::next_pending(db, m_options.max_sessions_per_request, per_uid, m_next_uid);
  // The round loads the sessions, in turn order, whose stored bytes and
  // likely spans (one for two events: an enter and its leave) fit its
  // bounds, the first always: loading more only to send them next round
  // cost time, and sessions with big values or many children memory.
  // The others wait, their uid first in the next round (below).
  std::size_t taken = 0;
  {
    std::int64_t bytes = 0;
    std::int64_t spans = 0;
    for (; taken < turn.sessions.size(); ++taken) {
      const db::PendingSession& session = turn.sessions[taken];
      bytes += std::max<std::int64_t>(0, session.stored_bytes);
      spans += std::max<std::int64_t>(0, session.event_count) / 2 + 1;
      if (taken > 0 && (bytes > static_cast<std::int64_t>(m_options.max_bytes_per_request) ||
                        spans > static_cast<std::int64_t>(m_options.max_spans_per_request))) {
        break;
      }
    }
  }
  const std::vector<db::PendingSession>& pending = turn.sessions;
  // The round's sessions are loaded together; each tree is built once, its
  // sessions' spans in one walk, in the order the turns gave them.
  std::vector<model::ExportSession> wanted;
  wanted.reserve(taken);
  std::unordered_map<std::int64_t, std::size_t> index_of;  // session id -> index in pending
  for (std::size_t i = 0; i < taken; ++i) {
    // Its SID moves (nothing below reads it from the turn); the root is
    // compared below.
    wanted.push_back({std::move(turn.sessions[i].sid), pending[i].tree_sid, owner_of(pending[i]), std::nullopt, 0});
    index_of.emplace(pending[i].session_id, i);
  }
  std::vector<model::TreeRows> trees;
  {
    const db::ReadTransaction snapshot(db);
    // A session over a round's bounds (it goes alone) is loaded as a slice,
    // its first events within them, never whole: one session's memory is
    // bounded as a round's is, whatever it holds (150,000 data events of a
    // KiB took 778 MB loaded whole), and it always leaves the queue.
    const auto max_events = static_cast<std::int64_t>(2 * m_options.max_spans_per_request);
    const auto max_bytes = static_cast<std::int64_t>(m_options.max_bytes_per_request);
    for (std::size_t i = 0; i < taken; ++i) {
      if (pending[i].event_count > max_events || pending[i].stored_bytes > max_bytes) {
        if (const auto slice = db::export_slice(db, pending[i].session_id, max_events, max_bytes)) {
          wanted[i].before_seq = slice->before_seq;
          wanted[i].events_left_out = std::max<std::int64_t>(0, pending[i].event_count - slice->events);
        }
      }
    }
    trees = loader.load(wanted);
  }
  std::vector<SessionSpans> batch;
  batch.reserve(taken);
  std::size_t spans = 0;
  // Kept from tree to tree of the round, cleared, not made anew: growing
  // them span by span again for every tree was about one allocation a
  // span. They hold at most the largest tree's spans (moved-from shells
  // after the move below), as one tree's walk did before; freed with the round.
  std::vector<otlp::Span> tree_spans;
  std::vector<std::int64_t> owners;
  std::vector<std::size_t> per_slot;
  std::vector<std::size_t> group;
  // Of each pending session: the tree it is sent with (its number in the
  // round; k_no_tree while none has taken it: it waits for the next round),
  // and its slot among that tree's sessions. Vectors for the round, where a
  // map made for each tree cost an allocation a session.
  constexpr std::size_t k_no_tree = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> tree_of(pending.size(), k_no_tree);
  std::vector<std::size_t> slot_of(pending.size(), 0);
  const auto slot = [&index_of, &slot_of](std::int64_t session_id) { return slot_of[index_of.at(session_id)]; };
  // Room for every tree up front: each stays where it is built, under the
  // spans' views of its strings, until the round is delivered.
  trees_built.reserve(trees.size());
  for (model::TreeRows& rows : trees) {
    if (spans >= m_options.max_spans_per_request) {
      break;  // the rest next round
    }
    const std::size_t tree_number = trees_built.size();
    // The queued sessions of this tree (one may also be loaded, as an
    // ancestor, for another tree, where it is not sent).
    group.clear();
    for (const model::ProcessRows& r : rows.rows) {
      if (const auto found = index_of.find(r.info.session_id);
          found != index_of.end() && pending[found->second].tree_sid == rows.root &&
          owner_of(pending[found->second]) == rows.owner &&
          tree_of[found->second] != tree_number) {
        tree_of[found->second] = tree_number;
        slot_of[found->second] = group.size();
        group.push_back(found->second);
      }
    }
    const model::ProcessTree& tree = trees_built.emplace_back(model::build_process_tree(rows.root, std::move(rows.rows)));
    // One walk for the tree's sessions, each span tagged with its session.
    tree_spans.clear();
    owners.clear();
    const otlp::BuildStats stats = otlp::append_spans(
        tree, tree_spans,
        [&](const model::ProcessInfo& process) {
          const auto found = index_of.find(process.session_id);
          return found != index_of.end() && tree_of[found->second] == tree_number;
        },
        m_options.rules, &owners, m_options.max_spans_per_request);
    std::vector<SessionSpans> sessions(group.size());
    for (const std::size_t i : group) {
      sessions[slot_of[i]].session_id = pending[i].session_id;
    }
    // Each session's spans counted first, so that its vector is allocated
    // once at its size, not regrown span by span.
    per_slot.assign(sessions.size(), 0);
    for (const std::int64_t owner : owners) {
      ++per_slot[slot(owner)];
    }
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      sessions[i].spans.reserve(per_slot[i]);
    }
    for (std::size_t s = 0; s < tree_spans.size(); ++s) {
      sessions[slot(owners[s])].spans.push_back(std::move(tree_spans[s]));
    }
    // A session over the bound sends its first spans, the process span
    // first, saying how many were left out.
    for (const auto& [id, left_out] : stats.left_out) {
      if (SessionSpans& session = sessions[slot(id)]; !session.spans.empty()) {
        session.spans.front().attributes.emplace_back(otlp::AttributeKey("trace2d.spans_left_out"),
                                                      static_cast<std::int64_t>(left_out));
      }
    }
    const std::unordered_set<std::int64_t> dropped(stats.dropped_sessions.begin(), stats.dropped_sessions.end());
    for (const std::size_t i : group) {
      SessionSpans& session = sessions[slot_of[i]];
      if (session.spans.empty() && dropped.contains(session.session_id)) {
        withheld.push_back(session.session_id);
        continue;
      }
      spans += session.spans.size();
      batch.push_back(std::move(session));
    }
  }
  // The next round starts with the first uid whose session waits for room,
  // so a uid whose sessions are big cannot keep the others' out.
  const auto waiting = std::find(tree_of.begin(), tree_of.end(), k_no_tree);
  m_next_uid =
      waiting == tree_of.end() ? turn.next_uid : pending[static_cast<std::size_t>(waiting - tree_of.begin())].uid;
  return batch;
}

bool OtlpExporter::export_round(db::Database& db, model::ExportRowLoader& loader) {
  std::vector<std::int64_t> withheld;
  std::vector<model::ProcessTree> trees;  // the batch's spans refer to them: declared first, freed last
  std::vector<SessionSpans> batch = build(db, loader, withheld, trees);
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
  std::size_t span_count = 0;
  for (const SessionSpans& session : batch) {
    ids.push_back(session.session_id);
    span_count += session.spans.size();
  }
  if (span_count == 0) {
    db::acknowledge(db, ids, 0, 0);  // nothing to send (a session without a process node): done
    return Delivery::acknowledged;
  }
  // The spans move into the request and back (a 413 sends them again in
  // halves): copying them cost a tenth of the exporter's time.
  request.spans.reserve(span_count);
  for (SessionSpans& session : batch) {
    std::move(session.spans.begin(), session.spans.end(), std::back_inserter(request.spans));
  }
  // The request is written into the memory of the last one (at most what
  // the round's bounds make, a few MiB): a new string each round was
  // faulted in afresh, and given back to the kernel when freed.
  std::string& body = m_body;
  body.clear();
  if (m_transport->encoding() == Encoding::json) {
    otlp::append_json_request(body, request);
  } else {
    otlp::append_protobuf_request(body, request);
  }
  {
    auto from = request.spans.begin();
    for (SessionSpans& session : batch) {
      std::move(from, from + static_cast<std::ptrdiff_t>(session.spans.size()), session.spans.begin());
      from += static_cast<std::ptrdiff_t>(session.spans.size());
    }
    request.spans.clear();
  }
  std::string reason;
  std::optional<std::chrono::milliseconds> retry_after;
  try {
    const std::optional<CollectorAnswer> sent = send(body);
    if (!sent) {
      return Delivery::stopping;
    }
    const CollectorAnswer& answer = *sent;
    const Judgement judgement = judge(answer.answer, batch.size());
    switch (judgement.verdict) {
      case Verdict::delivered: {
        const std::int64_t rejected = answer.rejected_spans;
        db::acknowledge(db, ids, static_cast<std::int64_t>(span_count), rejected);
        m_exported_spans.fetch_add(span_count);
        m_backoff.reset();
        if (m_paused.exchange(false)) {
          spdlog::info("otlp: {} takes the export again", m_options.url);
        }
        if (rejected > 0) {
          // Not sent again: the collector decided, and the same spans would
          // be rejected again (the specification: do not retry).
          spdlog::warn("otlp: the collector accepted the request but rejected {} of its {} spans", rejected,
                       span_count);
        }
        return Delivery::acknowledged;
      }
      case Verdict::split: {
        // Too large as it is: each half on its own.
        std::vector<SessionSpans> second(
            std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2)),
            std::make_move_iterator(batch.end()));
        batch.resize(batch.size() / 2);
        const Delivery first = deliver(db, batch);
        if (first != Delivery::acknowledged && first != Delivery::dropped) {
          return first;
        }
        return deliver(db, second);
      }
      case Verdict::drop: {
        // Rejected as malformed (HTTP 400, gRPC INVALID_ARGUMENT), or one
        // session too large alone (413): sending it again cannot change the
        // answer. Counted by reason and named, not retried; the export goes on.
        const std::string failure = answer.status + " from " + m_options.url + ": sessions dropped (" +
                                    std::string(db::to_string(judgement.reason)) + ")";
        m_failures.fetch_add(1);
        m_backoff.reset();
        m_paused.store(false);
        spdlog::error("otlp: {} rejected {} sessions ({} spans) with {}, which sending them again cannot "
                      "change: dropped ({}): {}",
                      m_options.url, ids.size(), span_count, answer.status, db::to_string(judgement.reason),
                      answer.said);
        db::drop_pending(db, ids, judgement.reason, failure);
        return Delivery::dropped;
      }
      case Verdict::retry:
        break;
    }
    reason = answer.status + " from " + m_options.url;
    if (!answer.hint.empty()) {
      reason += ": " + answer.hint;
    }
    if (!answer.said.empty()) {
      reason += " (it said: " + answer.said + ")";
    }
    retry_after = answer.retry_after;
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
  m_paused.store(true);
  db::record_failure(db, reason);
  const std::chrono::milliseconds wait = m_backoff.next(retry_after);
  spdlog::warn("otlp: export paused: {}; the queue is kept ({} sessions in this request); trying again in {} ms",
               reason, ids.size(), wait.count());
  return Delivery::retry_later;
}

}  // namespace trace2d::exporter
