#pragma once
// What comes out of the stitcher, and who takes it. The ingest worker parses
// and stitches; everything it learns goes to consumers through this
// interface, in the order it happened. The store is one consumer (it turns
// all of it into rows), the /metrics histograms another
// (daemon/metrics/duration_metrics.hpp): each plugs in without touching
// ingestion, the way ninja's BuildLogUser or osquery's logger plugins do.
// What must outlive a crash, as the OTLP export, reads committed sessions
// from the database instead (db/otlp_queue.hpp), never from here.
//
// Calls come from the ingest worker's thread only, and must not block for
// long: a slow consumer delays parsing, and behind it the memory bound.

#include <cstdint>
#include <optional>
#include <string_view>

#include "daemon/ingest/ingest_chunk.hpp"
#include "daemon/ingest/origin.hpp"
#include "daemon/stitch/session_record.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "proto/event.hpp"

namespace trace2d::stitch {

// One event, placed in its session. Valid during the call only.
struct StitchedEvent {
  const proto::Event& event;
  // The line exactly as received: it differs from event.json when invalid
  // UTF-8 was repaired, or credentials were redacted (then it is the redacted text).
  std::string_view original;
  const EventPlacement& placement;
  const ingest::Origin& origin;
  std::int64_t received_us = 0;
};

// Input that is not an event of any session, and why (a bad line, a
// refused sender, lines dropped at a bound). Valid during the call only.
struct RejectedInput {
  ingest::SourceKind source = ingest::SourceKind::stream;
  std::optional<std::int64_t> peer_pid;
  std::optional<std::int64_t> peer_uid;
  std::int64_t received_us = 0;
  std::string_view reason;
  std::string_view raw;  // as much of the input as is kept
  std::uint64_t size = 0;
};

class StitchedConsumer {
 public:
  virtual ~StitchedConsumer() = default;

  virtual void on_event(const StitchedEvent& stitched) = 0;
  virtual void on_reject(const RejectedInput& reject) = 0;
  // A trace file's position after the lines passed on so far.
  virtual void on_file_progress(const ingest::IngestChunk::FileProgress& /*progress*/, std::int64_t /*received_us*/) {}
  // A channel's input ended (its process exited) with the lines passed on so far.
  virtual void on_channel_end() {}
  // A uid's lines since the daemon started, and how many of them the rate limit dropped.
  virtual void on_uid_counts(std::int64_t /*uid*/, std::uint64_t /*lines*/, std::uint64_t /*dropped*/) {}
  // Sessions, regions and children that changed since the last hand-over;
  // they belong to hand-over `number`.
  virtual void on_changes(const StitchChanges& changes, std::uint64_t number) = 0;
  // What the consumer holds goes on now (to its queue, its exporter);
  // false when it held nothing.
  virtual bool hand_on(std::uint64_t number) = 0;
  // Holds enough that the worker should hand on at the next point where
  // no file's lines are half passed (a file's lines and its position must
  // reach the same hand-over).
  [[nodiscard]] virtual bool wants_hand_on() const = 0;
  // No more calls follow.
  virtual void close() = 0;
};

}  // namespace trace2d::stitch
