#include "daemon/export/otlp_sender.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "daemon/export/otlp_exporter.hpp"
#include "daemon/export/otlp_grpc_transport.hpp"
#include "daemon/export/otlp_http_transport.hpp"
#include "db/read_transaction.hpp"
#include "model/command_percentiles.hpp"
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
    o.max_backoff = options.forwarding.max_backoff;
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

OtlpSender::OtlpSender(const ExporterOptions& options)
    : m_url(options.url),
      m_description(std::string(to_string(options.protocol)) + (options.gzip ? ", gzip" : "")),
      m_rules(options.rules),
      m_resource(otlp::make_resource(options.resource)),
      m_scope{"trace2d", options.resource.trace2d_version},
      m_transport(make_transport(options)) {}

OtlpSender::~OtlpSender() = default;

void OtlpSender::open(db::Database& db) {
  model::LoadOptions load;
  load.errors = true;
  load.params = true;
  load.annotations = true;
  load.details = true;  // trace2receiver's ancestry, alias, repo set, printf messages
  m_loader = std::make_unique<model::ExportRowLoader>(db, load);
  m_last_percentiles = {};
}

void OtlpSender::close() {
  // Only what is on the loading thread: the round built stays with the
  // delivering thread until its next build().
  m_loader.reset();
}

void OtlpSender::begin_round(db::Database& db) {
  // Detail by outcome's p99s, read again every ten minutes: a bounded
  // window of runs (model/command_percentiles.hpp), never per round.
  if (m_rules.outcome_level && m_rules.slow_by_p99 &&
      (m_last_percentiles == std::chrono::steady_clock::time_point{} ||
       std::chrono::steady_clock::now() - m_last_percentiles >= std::chrono::minutes(10))) {
    m_last_percentiles = std::chrono::steady_clock::now();
    m_rules.command_p99 = model::command_p99(db);
  }
}

namespace {

// A round as read: the sessions offered, in their order, and their trees' rows.
struct OtlpLoadedRound final : LoadedRound {
  std::vector<db::PendingSession> offered;
  std::vector<model::TreeRows> trees;
};

}  // namespace

std::unique_ptr<LoadedRound> OtlpSender::load(db::Database& db, std::vector<db::PendingSession> offered,
                                              std::size_t max_spans, std::size_t max_bytes) {
  auto loaded = std::make_unique<OtlpLoadedRound>();
  // The round's sessions are loaded together: one execution of each query
  // for all of them.
  std::vector<model::ExportSession> wanted;
  wanted.reserve(offered.size());
  for (db::PendingSession& session : offered) {
    // Its SID moves (build() does not read it); the root is compared there.
    wanted.push_back(
        {std::move(session.sid), session.tree_sid, owner_of(session), std::nullopt, 0, session.session_id});
  }
  {
    const db::ReadTransaction snapshot(db);
    // A session over a round's bounds (it goes alone) is loaded as a slice,
    // its first events within them, never whole: one session's memory is
    // bounded as a round's is, whatever it holds (150,000 data events of a
    // KiB took 778 MB loaded whole), and it always leaves the queue.
    const auto max_events = static_cast<std::int64_t>(2 * max_spans);
    const auto max_stored = static_cast<std::int64_t>(max_bytes);
    for (std::size_t i = 0; i < offered.size(); ++i) {
      if (offered[i].event_count > max_events || offered[i].stored_bytes > max_stored) {
        if (const auto slice = db::export_slice(db, offered[i].session_id, max_events, max_stored)) {
          wanted[i].before_seq = slice->before_seq;
          wanted[i].events_left_out = std::max<std::int64_t>(0, offered[i].event_count - slice->events);
        }
      }
    }
    loaded->trees = m_loader->load(wanted);
  }
  loaded->offered = std::move(offered);
  return loaded;
}

void OtlpSender::build(std::unique_ptr<LoadedRound> loaded_round, std::size_t max_spans, Round& round) {
  // The last round's spans are views of its trees: they go first.
  m_spans.clear();
  m_trees.clear();
  round.items.clear();
  round.withheld.clear();
  auto& loaded = dynamic_cast<OtlpLoadedRound&>(*loaded_round);
  const std::vector<db::PendingSession>& offered = loaded.offered;
  std::vector<model::TreeRows>& trees = loaded.trees;
  round.first_waiting = offered.size();
  if (offered.empty()) {
    return;
  }
  const std::size_t taken = offered.size();
  // Each tree is built once, its sessions' spans in one walk, in the order
  // the turns gave them.
  std::unordered_map<std::int64_t, std::size_t> index_of;  // session id -> index in offered
  for (std::size_t i = 0; i < taken; ++i) {
    index_of.emplace(offered[i].session_id, i);
  }
  struct SessionSpans {
    std::int64_t session_id = 0;
    std::vector<otlp::Span> spans;
  };
  std::size_t spans = 0;
  // Kept from tree to tree of the round, cleared, not made anew: growing
  // them span by span again for every tree was about one allocation a
  // span. They hold at most the largest tree's spans (moved-from shells
  // after the move below), as one tree's walk did before; freed with the round.
  std::vector<otlp::Span> tree_spans;
  std::vector<std::int64_t> owners;
  std::vector<std::size_t> per_slot;
  std::vector<std::size_t> group;
  // Of each offered session: the tree it is sent with (its number in the
  // round; k_no_tree while none has taken it: it waits for the next round),
  // and its slot among that tree's sessions. Vectors for the round, where a
  // map made for each tree cost an allocation a session.
  constexpr std::size_t k_no_tree = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> tree_of(taken, k_no_tree);
  std::vector<std::size_t> slot_of(taken, 0);
  const auto slot = [&index_of, &slot_of](std::int64_t session_id) { return slot_of[index_of.at(session_id)]; };
  // Room for every tree up front: each stays where it is built, under the
  // spans' views of its strings, until the round is delivered.
  m_trees.reserve(trees.size());
  for (model::TreeRows& rows : trees) {
    if (spans >= max_spans) {
      break;  // the rest next round
    }
    const std::size_t tree_number = m_trees.size();
    // The offered sessions of this tree (one may also be loaded, as an
    // ancestor, for another tree, where it is not sent).
    group.clear();
    for (const model::ProcessRows& r : rows.rows) {
      if (const auto found = index_of.find(r.info.session_id);
          found != index_of.end() && offered[found->second].tree_sid == rows.root &&
          owner_of(offered[found->second]) == rows.owner && tree_of[found->second] != tree_number) {
        tree_of[found->second] = tree_number;
        slot_of[found->second] = group.size();
        group.push_back(found->second);
      }
    }
    const model::ProcessTree& tree = m_trees.emplace_back(model::build_process_tree(rows.root, std::move(rows.rows)));
    // One walk for the tree's sessions, each span tagged with its session.
    tree_spans.clear();
    owners.clear();
    const otlp::BuildStats stats = otlp::append_spans(
        tree, tree_spans,
        [&](const model::ProcessInfo& process) {
          const auto found = index_of.find(process.session_id);
          return found != index_of.end() && tree_of[found->second] == tree_number;
        },
        m_rules, &owners, max_spans);
    std::vector<SessionSpans> sessions(group.size());
    for (const std::size_t i : group) {
      sessions[slot_of[i]].session_id = offered[i].session_id;
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
        round.withheld.push_back(session.session_id);
        continue;
      }
      spans += session.spans.size();
      round.items.push_back({session.session_id, session.spans.size()});
      m_spans.push_back(std::move(session.spans));
    }
  }
  const auto waiting = std::find(tree_of.begin(), tree_of.end(), k_no_tree);
  round.first_waiting = static_cast<std::size_t>(waiting - tree_of.begin());
}

void OtlpSender::encode(std::size_t first, std::size_t last, std::string& body) {
  otlp::TraceBatch request{&m_resource, &m_scope, {}};
  std::size_t span_count = 0;
  for (std::size_t i = first; i < last; ++i) {
    span_count += m_spans[i].size();
  }
  // The spans move into the request and back (a 413 sends them again in
  // halves): copying them cost a tenth of the exporter's time.
  request.spans.reserve(span_count);
  for (std::size_t i = first; i < last; ++i) {
    std::move(m_spans[i].begin(), m_spans[i].end(), std::back_inserter(request.spans));
  }
  body.clear();
  if (m_transport->encoding() == Encoding::json) {
    otlp::append_json_request(body, request);
  } else {
    otlp::append_protobuf_request(body, request);
  }
  auto from = request.spans.begin();
  for (std::size_t i = first; i < last; ++i) {
    std::move(from, from + static_cast<std::ptrdiff_t>(m_spans[i].size()), m_spans[i].begin());
    from += static_cast<std::ptrdiff_t>(m_spans[i].size());
  }
}

}  // namespace trace2d::exporter
