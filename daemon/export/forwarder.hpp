#pragma once
// The durable forwarder: everything an export does whatever its backend.
// On threads and database connections of its own, never on the ingest
// path, it takes each round's queued sessions that have finished, the
// senders (uids) taking turns (db/otlp_queue.hpp), within the round's
// bounds (sessions, likely units, their stored bytes), has its Sender
// (sender.hpp) load, build and send them, and judges the answer
// (delivery_policy.hpp). A session leaves the queue only when the
// collector accepted it, or rejected it in a way sending it again cannot
// change (malformed; too large for a single session): dropped, counted by
// reason. Any other answer, or none, pauses the export and keeps the queue:
// a wrong token or path loses nothing, and fixing it delivers everything.
// So a restart, a crash or a collector outage neither loses nor repeats
// what was acknowledged; a request in flight at SIGTERM gets a bounded
// wait for its answer, and one cut off is sent again (delivery is at least
// once). Retries wait for the collector's Retry-After or back off
// exponentially with jitter; the queue waits in the database meanwhile, so
// memory stays bounded by two rounds.
//
// Two threads make a pipeline: a loading thread picks the next round and
// reads it from the database (on its own connection) while the delivering
// thread builds, encodes and sends the round before, and commits its
// answer. The sessions of both rounds are claimed, so the loader passes
// them over; a round that is not delivered (the collector refused it, or
// stopping) gives its sessions back, and the round loaded after it is read
// again, as the whole pipeline starts over.

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
#include <unordered_set>
#include <vector>

#include "daemon/export/delivery_policy.hpp"
#include "daemon/export/sender.hpp"
#include "daemon/metrics/exposition.hpp"
#include "db/otlp_queue.hpp"
#include "db/sqlite.hpp"

namespace trace2d::exporter {

struct ForwarderOptions {
  std::size_t max_sessions_per_request = 256;
  // Units (spans) in one request at most: the round's likely units (one
  // for two events: an enter and its leave) decide which sessions it
  // loads, the sender stops building there.
  std::size_t max_units_per_request = 8192;
  // The stored bytes of a round's sessions' events at most (a session over
  // it goes alone, loaded as a slice): the forwarder's memory.
  std::size_t max_bytes_per_request = 4 << 20;
  std::chrono::milliseconds poll{500};  // how often the queue is looked at when idle
  // A finished session goes once it has been quiet this long, or
  // k_detached_settle when it went on after its atexit and has not ended
  // again (db::Settling: a detached `git gc --auto`); zero: at once.
  std::chrono::milliseconds settle{2000};
  std::chrono::milliseconds max_backoff{60000};  // the longest wait between attempts (Retry-After wins)
  // At stop(), how long a request in flight may take to be answered, so
  // that an acknowledged request is not sent again after a restart.
  std::chrono::milliseconds shutdown_wait{5000};
  // Its log lines' prefix, and its threads' names ("trace2d-export",
  // "t2d-export-load").
  std::string name = "export";
  std::function<void()> on_thread_start;  // run first on each of its threads (their scheduling policy)
};

class Forwarder : public metrics::FigureSource {
 public:
  Forwarder(std::string db_path, ForwarderOptions options, std::unique_ptr<Sender> sender);
  virtual ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  void start();
  // Ends the thread: no new request starts; a request in flight gets up to
  // `shutdown_wait` for its answer (and its acknowledgement is committed),
  // then is aborted. What is not acknowledged stays queued for the next run.
  void stop();

  [[nodiscard]] std::uint64_t delivered_units() const { return m_delivered_units.load(); }
  [[nodiscard]] std::uint64_t failures() const { return m_failures.load(); }
  // True while the latest attempt failed and the export waits to try again.
  [[nodiscard]] bool paused() const { return m_paused.load(); }
  // The queue and the export's totals at the last count (about every
  // second, also while the export is paused).
  [[nodiscard]] db::ExportHealth health() const;
  // The export's families (trace2d_<name>_backlog_sessions, ...,
  // docs/metrics.md), from health() and the counters: no database read.
  void write_figures(metrics::Exposition& out) const override;

 private:
  enum class Delivery { acknowledged, dropped, retry_later, stopping };
  // A round takes at most max_sessions_per_request / this of one uid's
  // sessions, so at least this many uids have a turn in every round.
  static constexpr std::size_t k_uids_per_round = 8;
  // How long a session that went on after its atexit (a detached gc) and
  // has not ended again waits while quiet (ForwarderOptions::settle): its
  // repack, or a long step of its own, sends nothing meanwhile.
  static constexpr std::chrono::minutes k_detached_settle{10};

  // A round the loading thread has read, for the delivering thread.
  struct Loaded {
    std::vector<std::int64_t> session_ids;  // as offered, in the loaded round's order
    std::vector<std::int64_t> uids;         // of each
    std::unique_ptr<LoadedRound> round;
  };
  enum class RoundOutcome { sent, not_sent, none_loaded };

  void run();
  void load_rounds();  // the loading thread
  // Reads the next round on the loading thread's connection; false when
  // the queue has no unclaimed session to offer.
  bool load_round(db::Database& db);
  // One round: the next loaded one, waited for up to `poll`.
  RoundOutcome export_round(db::Database& db);
  // Sends m_round.items [first, last) as one request; halves on "too large".
  Delivery deliver(db::Database& db, std::size_t first, std::size_t last);
  // Sends unless stopping (nullopt then: nothing was sent), marking the
  // request in flight for stop(). Throws TransportError.
  std::optional<CollectorAnswer> send(std::string& body);
  bool wait_for(std::chrono::milliseconds delay);  // false: stopping
  void count(db::Database& db);                    // health(), from the database
  // The pipeline starts over: every claim is given back and a loaded
  // round not yet built is dropped (read again, as it may have changed).
  void restart_pipeline();

  std::string m_db_path;
  ForwarderOptions m_options;
  std::unique_ptr<Sender> m_sender;
  std::thread m_thread;         // delivering
  std::thread m_loader_thread;  // loading
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stopping = false;
  bool m_in_flight = false;  // a request was sent and its answer is awaited (under m_mutex)
  Backoff m_backoff;
  // The pipeline, under m_mutex: the sessions of the round loaded and of
  // the round being delivered (at most 2 * max_sessions_per_request); the
  // loaded round, waiting to be built; the uid whose turn comes first in
  // the next round the loader picks (db::next_pending), and apart from it
  // the uid of a session the delivering thread found no room for, which
  // goes before it once (one written over the other lost a turn's place);
  // and a count of restarts, so that a round loaded before one is not used.
  std::unordered_set<std::int64_t> m_claimed;
  std::optional<Loaded> m_loaded;
  std::int64_t m_next_uid = 0;
  std::optional<std::int64_t> m_waiting_uid;
  std::uint64_t m_generation = 0;
  Round m_round;  // the round being delivered; on the delivering thread only
  // The last request's body, whose memory the next one is written into
  // (deliver()). On the delivering thread only.
  std::string m_body;
  std::atomic<std::uint64_t> m_delivered_units{0};
  std::atomic<std::uint64_t> m_failures{0};
  std::atomic<bool> m_paused{false};
  mutable std::mutex m_health_mutex;
  db::ExportHealth m_health;  // under m_health_mutex: a scrape reads it on an io thread
};

}  // namespace trace2d::exporter
