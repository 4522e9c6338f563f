#pragma once
// The sending side of the ingest benchmarks, identical whichever reader is
// on the other end (trace2d or drain_reader): each client is a thread that
// replays its processes one after the other, each process on its own
// connection (or datagram socket, or file), one write per event as git does.

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/support.hpp"

namespace trace2d::bench {

// Rate limit for the latency benchmark: 0 sends as fast as possible.
struct Pace {
  double events_per_second = 0;
  // A writer ahead of its schedule by less than this does not sleep: 64
  // threads waking for every single event would cost more than they send.
  std::chrono::microseconds slack{1000};
};

struct WriteStats {
  std::int64_t failed_writes = 0;
  std::int64_t stamped = 0;  // events whose `time` was set to the moment of sending
};

// Stream clients. With a pace, every event's `time` is set to the wall-clock
// moment just before its write() (git's own meaning of `time`), so the
// payload carries its send time into the database.
WriteStats run_stream_writers(Payload& payload, const std::string& socket, const Pace& pace = {});

// Datagram clients: a socket per process, one blocking send per event.
WriteStats run_dgram_writers(const Payload& payload, const std::string& socket);

// Directory: every process's trace written to a file in `staging` (before the
// clock starts), to be renamed into `watched` (same file system).
std::vector<std::pair<std::string, std::string>> stage_files(const Payload& payload, const std::string& staging,
                                                            const std::string& watched);
WriteStats rename_all(const std::vector<std::pair<std::string, std::string>>& moves);

// Sets the `time` member of an event line; false if it has none.
bool stamp_time(std::string& line, std::int64_t unix_us);

}  // namespace trace2d::bench
