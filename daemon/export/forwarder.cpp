#include "daemon/export/forwarder.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

#include "proto/timestamp.hpp"

namespace trace2d::exporter {

Forwarder::Forwarder(std::string db_path, ForwarderOptions options, std::unique_ptr<Sender> sender)
    : m_db_path(std::move(db_path)),
      m_options(std::move(options)),
      m_sender(std::move(sender)),
      m_backoff(m_options.max_backoff) {}

Forwarder::~Forwarder() {
  stop();
}

namespace {

// Names the calling thread, so that `top -H` and perf tell it apart (at
// most 15 characters), and runs the options' start hook.
void begin_thread(const std::string& name, const ForwarderOptions& options) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  if (options.on_thread_start) {
    options.on_thread_start();
  }
}

// What the sender prepared on a connection goes before the connection does.
class OpenedSender {
 public:
  OpenedSender(Sender& sender, db::Database& db) : m_sender(sender) { m_sender.open(db); }
  ~OpenedSender() { m_sender.close(); }
  OpenedSender(const OpenedSender&) = delete;
  OpenedSender& operator=(const OpenedSender&) = delete;

 private:
  Sender& m_sender;
};

}  // namespace

void Forwarder::start() {
  m_thread = std::thread([this] {
    begin_thread("trace2d-" + m_options.name, m_options);
    run();
  });
  m_loader_thread = std::thread([this] {
    begin_thread("t2d-" + m_options.name + "-load", m_options);
    load_rounds();
  });
}

void Forwarder::stop() {
  {
    std::unique_lock lock(m_mutex);
    m_stopping = true;
    m_wake.notify_all();
    // An answer to the request in flight may be on its way: waiting for it
    // (bounded) lets its acknowledgement be committed, where aborting sent
    // its sessions again after the restart.
    if (!m_wake.wait_for(lock, m_options.shutdown_wait, [this] { return !m_in_flight; })) {
      spdlog::warn(
          "{}: stopping: no answer from {} within {} ms; the request is abandoned, and its sessions, "
          "still queued, are sent again at the next start",
          m_options.name, m_sender->target(), m_options.shutdown_wait.count());
    }
  }
  m_sender->abort();
  if (m_thread.joinable()) {
    m_thread.join();
  }
  if (m_loader_thread.joinable()) {
    m_loader_thread.join();
  }
}

db::ExportHealth Forwarder::health() const {
  std::lock_guard lock(m_health_mutex);
  return m_health;
}

void Forwarder::write_figures(metrics::Exposition& out) const {
  using metrics::Type;
  const db::ExportHealth health = this->health();
  const auto family = [&](std::string_view name, Type type, std::string_view help) {
    out.family("trace2d_" + m_options.name + "_" + std::string(name), type, help);
  };
  family("backlog_sessions", Type::gauge,
         "Finished sessions queued for export, waiting to be sent (running ones are not counted), at the "
         "exporter's last count.");
  out.value(static_cast<double>(health.finished_sessions));
  family("oldest_queued_age_seconds", Type::gauge,
         "How long ago the finished session first in the export queue received its last event; 0 when none "
         "waits.");
  const double now = static_cast<double>(proto::unix_now_us()) / 1e6;
  out.value(health.oldest_finished_at ? std::max(0.0, now - *health.oldest_finished_at) : 0.0);
  family("last_success_timestamp_seconds", Type::gauge,
         "When the collector last acknowledged a request (Unix time; absent before the first).");
  if (health.last_success_at) {
    out.value(*health.last_success_at);
  }
  family("export_paused", Type::gauge,
         "1 while the latest export attempt failed (refused, unreachable) and the queue waits for the next.");
  out.value(paused() ? 1 : 0);
  family("dropped_sessions", Type::counter,
         "Sessions that left the export queue unsent, by reason: bad_request (HTTP 400), too_large (HTTP 413 "
         "for one session), retention (deleted while queued); since the database was made.");
  for (const auto& [reason, sessions] : health.dropped) {
    out.value({{"reason", reason}}, static_cast<double>(sessions));
  }
  family("rejected_spans", Type::counter,
         "Spans the collector rejected in requests it accepted (partial_success); since the database was made.");
  out.value(static_cast<double>(health.rejected_spans));
  family("exported_spans", Type::counter, "Spans the collector acknowledged since the daemon started.");
  out.value(static_cast<double>(delivered_units()));
  family("export_failures", Type::counter,
         "Export attempts that failed (retried later, or dropped as rejected), and errors reading or updating the "
         "export queue in the database (retried in 5 s), since the daemon started.");
  out.value(static_cast<double>(failures()));
}

void Forwarder::count(db::Database& db) {
  db::ExportHealth health = db::export_health(db);
  std::lock_guard lock(m_health_mutex);
  m_health = std::move(health);
}

bool Forwarder::wait_for(std::chrono::milliseconds delay) {
  std::unique_lock lock(m_mutex);
  m_wake.wait_for(lock, delay, [this] { return m_stopping; });
  return !m_stopping;
}

std::optional<CollectorAnswer> Forwarder::send(std::string& body) {
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
    Forwarder& forwarder;
    ~Landed() {
      {
        std::lock_guard lock(forwarder.m_mutex);
        forwarder.m_in_flight = false;
      }
      forwarder.m_wake.notify_all();
    }
  } landed{*this};
  return m_sender->send(body);
}

void Forwarder::restart_pipeline() {
  std::optional<Loaded> dropped;  // freed outside the lock
  {
    std::lock_guard lock(m_mutex);
    m_claimed.clear();
    dropped = std::move(m_loaded);
    m_loaded.reset();
    ++m_generation;
  }
  m_wake.notify_all();
}

void Forwarder::run() {
  spdlog::info("{}: exporting finished process trees to {} ({})", m_options.name, m_sender->target(),
               m_sender->describe());
  auto last_count = std::chrono::steady_clock::time_point{};
  while (true) {
    try {
      db::Database db(m_db_path, db::OpenMode::read_write_create);
      db.set_busy_timeout(10000);
      // The forwarder's commits (the queue's acknowledgements, a round's
      // counters) are as durable as the writer's: synchronous = NORMAL,
      // which in WAL mode survives a crash of the daemon. An OS crash may
      // lose the last acknowledgement, and its sessions are sent again, as
      // when the daemon stops between the collector's answer and the
      // commit: nothing is lost. SQLite's default, FULL, waited for an
      // fdatasync of the WAL every round: a fifth of the time export_bench
      // took (bench/README.md, "Export").
      db.exec("PRAGMA synchronous = NORMAL");
      while (true) {
        db::set_export_enabled(db, true, m_sender->target());  // again after a recreated database
        m_sender->begin_round(db);
        const RoundOutcome outcome = export_round(db);
        // The next round at once, unless this one failed (or found nothing
        // to send): export_round() waited for the loader already.
        const std::chrono::milliseconds delay = m_backoff.current().count() == 0 && outcome != RoundOutcome::not_sent
                                                    ? std::chrono::milliseconds(0)
                                                    : std::max(m_options.poll, m_backoff.current());
        // Counted here, on the forwarder's connection, so that /metrics
        // never reads the database on an io thread; also while a backoff
        // waits (up to a minute), so that the figures stay current.
        const auto until = std::chrono::steady_clock::now() + delay;
        do {
          if (std::chrono::steady_clock::now() - last_count >= std::chrono::seconds(1)) {
            last_count = std::chrono::steady_clock::now();
            count(db);
          }
          const auto left =
              std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
          if (!wait_for(std::clamp(left, std::chrono::milliseconds(0), std::chrono::milliseconds(1000)))) {
            return;
          }
        } while (std::chrono::steady_clock::now() < until);
      }
    } catch (const std::exception& e) {
      m_failures.fetch_add(1);
      restart_pipeline();  // the round being delivered is given back
      spdlog::error("{}: {}; trying again in 5 s", m_options.name, e.what());
      if (!wait_for(std::chrono::seconds(5))) {
        return;
      }
    }
  }
}

void Forwarder::load_rounds() {
  while (true) {
    try {
      db::Database db(m_db_path, db::OpenMode::read_write_create);
      db.set_busy_timeout(10000);
      const OpenedSender opened(*m_sender, db);
      while (true) {
        {
          // One round ahead at most: the next is read once this one is taken.
          std::unique_lock lock(m_mutex);
          m_wake.wait(lock, [this] { return m_stopping || !m_loaded; });
          if (m_stopping) {
            return;
          }
        }
        if (!load_round(db) && !wait_for(m_options.poll)) {
          return;
        }
      }
    } catch (const std::exception& e) {
      m_failures.fetch_add(1);
      spdlog::error("{}: loading: {}; trying again in 5 s", m_options.name, e.what());
      if (!wait_for(std::chrono::seconds(5))) {
        return;
      }
    }
  }
}

bool Forwarder::load_round(db::Database& db) {
  std::unordered_set<std::int64_t> claimed;
  std::int64_t first_uid = 0;
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(m_mutex);
    claimed = m_claimed;  // the round being delivered: at most max_sessions_per_request
    first_uid = m_waiting_uid.value_or(m_next_uid);
    m_waiting_uid.reset();
    generation = m_generation;
  }
  const std::size_t per_uid = std::max<std::size_t>(1, m_options.max_sessions_per_request / k_uids_per_round);
  db::Settling settling;
  if (m_options.settle.count() > 0) {
    const std::int64_t now_us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    settling.quiet_before = proto::format_utc_timestamp(
        now_us - std::chrono::duration_cast<std::chrono::microseconds>(m_options.settle).count());
    settling.detached_quiet_before = proto::format_utc_timestamp(
        now_us - std::chrono::duration_cast<std::chrono::microseconds>(k_detached_settle).count());
  }
  db::PendingTurn turn =
      db::next_pending(db, m_options.max_sessions_per_request, per_uid, first_uid, claimed, settling);
  if (turn.sessions.empty()) {
    return false;
  }
  // The round offers the sessions, in turn order, whose stored bytes and
  // likely units (one for two events: an enter and its leave) fit its
  // bounds, the first always: loading more only to send them next round
  // cost time, and sessions with big values or many children memory.
  // The others wait, their uid first in the next round (below).
  std::size_t taken = 0;
  {
    std::int64_t bytes = 0;
    std::int64_t units = 0;
    for (; taken < turn.sessions.size(); ++taken) {
      const db::PendingSession& session = turn.sessions[taken];
      bytes += std::max<std::int64_t>(0, session.stored_bytes);
      units += std::max<std::int64_t>(0, session.event_count) / 2 + 1;
      if (taken > 0 && (bytes > static_cast<std::int64_t>(m_options.max_bytes_per_request) ||
                        units > static_cast<std::int64_t>(m_options.max_units_per_request))) {
        break;
      }
    }
  }
  // The next round starts with the first uid whose session waits for room,
  // so a uid whose sessions are big cannot keep the others' out.
  const std::int64_t next_uid = taken < turn.sessions.size() ? turn.sessions[taken].uid : turn.next_uid;
  Loaded loaded;
  loaded.session_ids.reserve(taken);
  loaded.uids.reserve(taken);
  for (std::size_t i = 0; i < taken; ++i) {
    loaded.session_ids.push_back(turn.sessions[i].session_id);
    loaded.uids.push_back(turn.sessions[i].uid);
  }
  turn.sessions.resize(taken);
  loaded.round =
      m_sender->load(db, std::move(turn.sessions), m_options.max_units_per_request, m_options.max_bytes_per_request);
  {
    std::lock_guard lock(m_mutex);
    if (generation != m_generation) {
      return true;  // the pipeline started over while this was read: read again
    }
    m_claimed.insert(loaded.session_ids.begin(), loaded.session_ids.end());
    m_next_uid = next_uid;
    m_loaded = std::move(loaded);
  }
  m_wake.notify_all();
  return true;
}

Forwarder::RoundOutcome Forwarder::export_round(db::Database& db) {
  Loaded loaded;
  std::uint64_t generation = 0;
  {
    // Up to a second (when /metrics' figures are counted again) for the
    // loader to read a round.
    std::unique_lock lock(m_mutex);
    if (!m_wake.wait_for(lock, std::chrono::seconds(1), [this] { return m_stopping || m_loaded; }) || m_stopping) {
      return RoundOutcome::none_loaded;
    }
    loaded = std::move(*m_loaded);
    m_loaded.reset();
    generation = m_generation;
  }
  m_wake.notify_all();  // the loader reads the next round meanwhile
  // Whatever this round did not take out of the queue (sessions waiting
  // for room, or not found in their trees) the loader may offer again once
  // the round is over; not after a restart, whose claims are new.
  struct Released {
    Forwarder& forwarder;
    const std::vector<std::int64_t>& ids;
    std::uint64_t generation;
    ~Released() {
      std::lock_guard lock(forwarder.m_mutex);
      if (generation == forwarder.m_generation) {
        for (const std::int64_t id : ids) {
          forwarder.m_claimed.erase(id);
        }
      }
    }
  } released{*this, loaded.session_ids, generation};
  m_round = Round{};
  m_sender->build(std::move(loaded.round), m_options.max_units_per_request, m_round);
  if (m_round.first_waiting < loaded.uids.size()) {
    std::lock_guard lock(m_mutex);
    m_waiting_uid = loaded.uids[m_round.first_waiting];  // its uid first in the next round picked
  }
  if (!m_round.withheld.empty()) {
    db::withhold(db, m_round.withheld);
  }
  if (m_round.items.empty()) {
    return m_round.withheld.empty() ? RoundOutcome::not_sent : RoundOutcome::sent;
  }
  const Delivery delivery = deliver(db, 0, m_round.items.size());
  if (delivery == Delivery::retry_later) {
    restart_pipeline();  // the round waits to be sent again, and the one loaded after it to be read again
  }
  return delivery == Delivery::acknowledged || delivery == Delivery::dropped ? RoundOutcome::sent
                                                                             : RoundOutcome::not_sent;
}

Forwarder::Delivery Forwarder::deliver(db::Database& db, std::size_t first, std::size_t last) {
  std::vector<std::int64_t> ids;
  ids.reserve(last - first);
  std::size_t units = 0;
  for (std::size_t i = first; i < last; ++i) {
    ids.push_back(m_round.items[i].session_id);
    units += m_round.items[i].units;
  }
  if (units == 0) {
    db::acknowledge(db, ids, 0, 0);  // nothing to send (a session without a process node): done
    return Delivery::acknowledged;
  }
  // The request is written into the memory of the last one (at most what
  // the round's bounds make, a few MiB): a new string each round was
  // faulted in afresh, and given back to the kernel when freed.
  m_sender->encode(first, last, m_body);
  const std::string& target = m_sender->target();
  std::string reason;
  std::optional<std::chrono::milliseconds> retry_after;
  try {
    const std::optional<CollectorAnswer> sent = send(m_body);
    if (!sent) {
      return Delivery::stopping;
    }
    const CollectorAnswer& answer = *sent;
    const Judgement judgement = judge(answer.answer, ids.size());
    switch (judgement.verdict) {
      case Verdict::delivered: {
        const std::int64_t rejected = answer.rejected_spans;
        db::acknowledge(db, ids, static_cast<std::int64_t>(units), rejected);
        m_delivered_units.fetch_add(units);
        m_backoff.reset();
        if (m_paused.exchange(false)) {
          spdlog::info("{}: {} takes the export again", m_options.name, target);
        }
        if (rejected > 0) {
          // Not sent again: the collector decided, and the same spans would
          // be rejected again (the specification: do not retry).
          spdlog::warn("{}: the collector accepted the request but rejected {} of its {} spans", m_options.name,
                       rejected, units);
        }
        return Delivery::acknowledged;
      }
      case Verdict::split: {
        // Too large as it is: each half on its own.
        const std::size_t middle = first + (last - first) / 2;
        const Delivery first_half = deliver(db, first, middle);
        if (first_half != Delivery::acknowledged && first_half != Delivery::dropped) {
          return first_half;
        }
        return deliver(db, middle, last);
      }
      case Verdict::drop: {
        // Rejected as malformed (HTTP 400, gRPC INVALID_ARGUMENT), or one
        // session too large alone (413): sending it again cannot change the
        // answer. Counted by reason and named, not retried; the export goes on.
        const std::string failure = answer.status + " from " + target + ": sessions dropped (" +
                                    std::string(db::to_string(judgement.reason)) + ")";
        m_failures.fetch_add(1);
        m_backoff.reset();
        m_paused.store(false);
        spdlog::error(
            "{}: {} rejected {} sessions ({} spans) with {}, which sending them again cannot "
            "change: dropped ({}): {}",
            m_options.name, target, ids.size(), units, answer.status, db::to_string(judgement.reason), answer.said);
        db::drop_pending(db, ids, judgement.reason, failure);
        return Delivery::dropped;
      }
      case Verdict::retry:
        break;
    }
    reason = answer.status + " from " + target;
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
  spdlog::warn("{}: export paused: {}; the queue is kept ({} sessions in this request); trying again in {} ms",
               m_options.name, reason, ids.size(), wait.count());
  return Delivery::retry_later;
}

}  // namespace trace2d::exporter
