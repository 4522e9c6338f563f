#pragma once
// An export backend's part of an export: turning a round's queued sessions
// into a request, and sending it. The forwarder (forwarder.hpp) does the
// rest, the same for every backend: the durable queue, the senders' turns,
// a round's bounds, the collector's answer (delivery_policy.hpp), backoff,
// the acknowledgements and the figures. OTLP is the one backend today
// (otlp_sender.hpp, over HTTP or gRPC through transport.hpp); docs/
// architecture.md, "Where to change what", says what another one touches.
//
// Two threads use it, as a pipeline: the forwarder's loading thread reads
// a round from the database (open, load, close, on that thread's own
// connection) while its delivering thread builds, encodes and sends the
// round before (begin_round, build, encode, send); abort() from any thread.
// Loading is about half of an export's work (bench/costs.md).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/export/transport.hpp"
#include "db/otlp_queue.hpp"
#include "db/sqlite.hpp"

namespace trace2d::exporter {

// What a round sends, as the forwarder accounts for it: each session with
// the units (spans) made of it, in the order the sender encodes them.
struct RoundItem {
  std::int64_t session_id = 0;
  std::size_t units = 0;
};

struct Round {
  std::vector<RoundItem> items;
  // Sessions the backend's rules made nothing of (a detail rule's drop):
  // they leave the queue, counted as withheld.
  std::vector<std::int64_t> withheld;
  // The first of the offered sessions that did not fit in the round (its
  // uid goes first next round); the number offered when all went.
  std::size_t first_waiting = 0;
};

// What load() read of a round's sessions, for build(): the backend's own.
class LoadedRound {
 public:
  virtual ~LoadedRound() = default;
};

class Sender {
 public:
  virtual ~Sender() = default;

  // On the loading thread: a (re)opened connection to the database, which
  // load() reads with (what it reads with is prepared again).
  virtual void open(db::Database& db) = 0;
  // On the loading thread, before that connection closes: what was
  // prepared on it goes.
  virtual void close() = 0;
  // On the loading thread: reads the offered sessions (the first always,
  // each bounded by `bytes` of stored events, the round by `units`), from
  // one snapshot of the database.
  [[nodiscard]] virtual std::unique_ptr<LoadedRound> load(db::Database& db, std::vector<db::PendingSession> offered,
                                                          std::size_t units, std::size_t bytes) = 0;
  // On the delivering thread, before each round, with that thread's
  // connection (the sender's own periodic reads).
  virtual void begin_round(db::Database& db) = 0;
  // Builds a loaded round (at most `units`) and keeps what it built until
  // the next build(). Fills `round`; its first_waiting counts the offered
  // sessions in the order load() was given them.
  virtual void build(std::unique_ptr<LoadedRound> loaded, std::size_t units, Round& round) = 0;
  // Encodes round.items [first, last) as one request into `body` (cleared).
  virtual void encode(std::size_t first, std::size_t last, std::string& body) = 0;
  // Sends one encoded request and waits for the answer; throws
  // TransportError when none came (transport.hpp).
  virtual CollectorAnswer send(std::string& body) = 0;
  // From another thread: ends a send() in progress; later ones fail at once.
  virtual void abort() = 0;
  // Where it sends, for the log and the queue's status row ("http://c:4318/v1/traces").
  [[nodiscard]] virtual const std::string& target() const = 0;
  // How, for the log ("http/protobuf, gzip").
  [[nodiscard]] virtual std::string describe() const = 0;
};

}  // namespace trace2d::exporter
