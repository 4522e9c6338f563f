#pragma once
// The pipeline thread: parses the lines readers hand over, stitches them into
// sessions, and passes everything it learns to its consumers (the store, and
// whatever else plugs in: stitch/stitched_consumer.hpp). It never touches a
// socket, so however slow it is, readers keep draining.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/ingest/ingest_chunk.hpp"
#include "daemon/ingest/line_framer.hpp"
#include "daemon/ingest/memory_budget.hpp"
#include "daemon/ingest/work_queue.hpp"
#include "daemon/pipeline/uid_rate_limiter.hpp"
#include "daemon/settings/setting.hpp"
#include "daemon/stitch/stitched_consumer.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "proto/parser.hpp"

namespace trace2d::pipeline {

// Per kind of source: what the pipeline made of the lines.
struct IngestCounters {
  struct PerSource {
    std::atomic<std::uint64_t> lines{0};
    std::atomic<std::uint64_t> events{0};
    std::atomic<std::uint64_t> rejects{0};
    // Read, then dropped before parsing (included in `lines`): at the
    // memory bound (a uid's share) or by the rate valve. The same lines as
    // uid_stats.dropped.
    std::atomic<std::uint64_t> dropped{0};
    std::atomic<std::uint64_t> too_many_files{0};
  };
  std::array<PerSource, 4> by_source;  // indexed by ingest::SourceKind
  std::atomic<std::uint64_t> repaired_utf8{0};

  PerSource& of(ingest::SourceKind kind) { return by_source[static_cast<std::size_t>(kind)]; }
  [[nodiscard]] std::uint64_t total(std::atomic<std::uint64_t> PerSource::*field) const {
    std::uint64_t sum = 0;
    for (const auto& s : by_source) {
      sum += (s.*field).load();
    }
    return sum;
  }
};

class IngestWorker {
 public:
  struct Options {
    std::size_t max_line_bytes = ingest::k_default_max_line_bytes;  // for the "line too long" reason; shared
    // The rate valve (uid_rate_limiter.hpp): lines one uid may send per
    // second (0: no valve) while it presses on the pipeline (holds its
    // share of the memory bound); beyond it, lines are dropped and counted
    // on their sessions and per uid. A safety valve, not the fairness
    // (that is the memory shares): high enough that one busy host never
    // meets it (trace2d ingests some 470,000 events/s, bench/RESULTS.md),
    // and never applied while the pipeline has room.
    std::uint64_t per_uid_lines_per_second = 1000000;
    // Passwords in URLs (https://user:pass@host) are replaced before parsing.
    bool redact_url_credentials = true;
    // A datagram session has no EOF: without a terminal event for this
    // long it is incomplete (set_idle_timeout changes it while running).
    std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
    std::chrono::milliseconds uid_stats_interval{2000};
    std::chrono::milliseconds tick{200};       // housekeeping when idle
    // ...and when nothing at all is held (no session in memory, no line
    // waiting): nothing to expire or forget, so wake seldom (an idle
    // service's wake-ups are CPU and power taken from the host).
    std::chrono::milliseconds idle_tick{1000};
    // While busy, wake at most this often unless this many chunks wait
    // (or a channel ends). Short, since a line waits here before it can be
    // committed: at most this long, on an idle host.
    std::chrono::milliseconds gather{5};
    std::size_t gather_chunks = 32;
    // Lines of one uid parsed before the next uid's turn (take_turns()).
    std::size_t turn_lines = 256;

    // The settings that fill these (docs/configuration.md); `Self` is
    // Options or const Options.
    template <typename Self, typename Visitor>
    static void visit_settings(Self& o, Visitor& v) {
      using settings::k_day_ms;
      using settings::Key;
      using settings::Range;
      using settings::Reload;
      v.integer(Key{"dgram", "idle_timeout_ms", "--dgram-idle-timeout-ms", "MS",
                    "A datagram session silent this long is incomplete", Reload::live},
                o.idle_timeout, Range{1, 30 * k_day_ms});
      v.integer(Key{"limits", "per_uid_lines_per_second", "--per-uid-rate", "N",
                    "The rate valve: lines one uid may send per second while it holds its memory share (0: none)"},
                o.per_uid_lines_per_second, Range{0, 1LL << 32});
      v.boolean(Key{"security", "redact_url_credentials", "--redact-url-credentials", "",
                    "Replace credentials (userinfo) in URLs before storing"},
                o.redact_url_credentials);
    }
  };

  // `committed_batch` tells which hand-over the store has committed: the
  // stitcher forgets finished sessions only once their rows are stored.
  IngestWorker(ingest::WorkQueue<ingest::IngestChunk>& input, ingest::MemoryBudget& budget,
               stitch::Stitcher& stitcher, std::vector<stitch::StitchedConsumer*> consumers,
               std::function<std::uint64_t()> committed_batch, Options options);

  // The thread body: returns once the input is closed and drained, after
  // the last hand-over, and closes every consumer.
  void run();

  // Sessions that have no channel (datagram ones) and stay silent this long
  // without a terminal event become incomplete. Changeable while running.
  void set_idle_timeout(std::chrono::milliseconds timeout) { m_idle_timeout_ms.store(timeout.count()); }
  // Replaces the storage rule's patterns (Stitcher::set_storage_drop), from
  // any thread: the worker applies them before its next round.
  void set_storage_drop(std::vector<std::string> patterns);

  [[nodiscard]] IngestCounters& counters() { return m_counters; }

 private:
  // Parses up to `max_lines` lines from `first_line` (all of them for a
  // file's chunk); returns where it stopped. The chunk's own bookkeeping is
  // done with its last line.
  std::size_t process(const ingest::IngestChunk& chunk, std::size_t first_line, std::size_t max_lines);
  // One or more rounds over the uids with chunks waiting; true when some
  // still wait (new chunks came, or its time slice ended).
  bool take_turns();
  static std::int64_t turn_key(const ingest::IngestChunk& chunk);
  void lost(std::string_view sid, const ingest::Origin& origin, std::uint64_t lines, ingest::LossReason reason,
            std::int64_t received_us);
  void lost_at_memory_bound(const ingest::IngestChunk& chunk);
  void reject(const ingest::IngestChunk& chunk, const ingest::Origin& origin, std::string_view reason,
              std::string_view raw, std::uint64_t size);
  void report_uids(bool force);
  [[nodiscard]] bool consumers_want_hand_on() const;
  void hand_on();

  ingest::WorkQueue<ingest::IngestChunk>& m_input;
  ingest::MemoryBudget& m_budget;
  stitch::Stitcher& m_stitcher;
  std::vector<stitch::StitchedConsumer*> m_consumers;
  std::function<std::uint64_t()> m_committed_batch;
  Options m_options;
  std::atomic<std::int64_t> m_idle_timeout_ms;
  std::mutex m_settings_mutex;
  std::vector<std::string> m_new_storage_drop;  // guarded by m_settings_mutex
  std::atomic<bool> m_settings_changed{false};
  struct PendingChunk {
    ingest::IngestChunk chunk;
    std::size_t next_line = 0;
  };
  std::map<std::int64_t, std::deque<PendingChunk>> m_pending;  // by the sender's uid
  proto::Parser m_parser;
  proto::Event m_event;
  std::uint64_t m_next_batch_number = 1;
  std::string m_reason;
  std::string m_redacted;
  UidRateLimiter m_limiter;
  std::map<std::int64_t, UidRateLimiter::Counts> m_reported;  // as last written
  // Lost lines no session could be named for, by uid, since the last report.
  struct Unattributed {
    ingest::SourceKind source = ingest::SourceKind::stream;
    std::array<std::uint64_t, ingest::k_loss_reasons> lines{};
  };
  std::map<std::int64_t, Unattributed> m_unattributed;
  std::chrono::steady_clock::time_point m_last_uid_report{};
  IngestCounters m_counters;
};

}  // namespace trace2d::pipeline
