#pragma once
// Reads every accepted stream connection, on a thread of its own.
//
// git writes one event per write(). Read the way an Asio socket is (its
// descriptor registered edge-triggered for good), every one of those writes
// wakes the reader: about twenty wake-ups per git process, each CPU taken
// from git on the same machine. Here each connection sits in an epoll set
// armed one-shot: after a read that found only a trickle, it is re-armed
// `read_pacing` later, and git's writes meanwhile wait in the socket buffer
// (far larger than what git writes in that time) without waking anyone.
// A connection that delivers a lot is re-armed at once: under load nothing
// waits.
//
// The reader never waits for parsing or SQLite: it frames lines and hands
// them to the pipeline. Only at the memory bound does it leave a connection
// unread, for at most `overflow_wait`, after which it reads and drops
// (counted) so that git never blocks for long on a stuck collector.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "daemon/ingest/ingest_sink.hpp"
#include "daemon/ingest/line_framer.hpp"
#include "daemon/ingest/origin.hpp"
#include "daemon/settings/setting.hpp"
#include "daemon/source/due_queue.hpp"
#include "daemon/source/unique_fd.hpp"

namespace trace2d::source {

class StreamReader {
 public:
  struct Options {
    ingest::LineFramer::Limits framing;                 // limits.max_line_bytes, shared
    std::chrono::milliseconds overflow_wait{2000};      // limits.overflow_wait_ms, shared
    std::size_t max_read_per_wakeup = 4 * 1024 * 1024;  // fairness between connections
    // After a read that found less than `trickle_bytes`, the connection is
    // read again no sooner than this (0: at once).
    std::chrono::microseconds read_pacing{5000};
    // Well below what a socket buffer holds in git's small writes (about
    // 200 KiB of kernel memory, some 250 events), so that pacing never
    // lets a writer's buffer fill.
    std::size_t trickle_bytes = 16 * 1024;

    // Every local user can connect, so what one uid can hold is bounded
    // (docs/security.md). Connections one uid may hold open: at the bound,
    // its quietest connection is closed for a new one, or the new one is
    // refused when all of its connections are busy. 0: no bound.
    std::size_t max_connections_per_uid = 256;
    // Connections in all (the descriptors there are): at the bound, the uid
    // holding the most loses one the same way. 0: no bound.
    std::size_t max_connections = 0;
    // git writes its `version` event as soon as it has connected: a
    // connection that has sent nothing this long is closed. 0: never.
    std::chrono::milliseconds silent_timeout{10000};
    // Unfinished lines held (in all of one uid's connections) beyond this
    // are cut short: their first `cut_keep_bytes` are kept for the reject
    // row, the rest is discarded. Charged to the memory bound too.
    std::size_t max_partial_bytes_per_uid = 8 * 1024 * 1024;
    std::size_t cut_keep_bytes = 4 * 1024;
    // A connection quiet this long is checked for its writer having exited
    // (the pid SO_PEERCRED gave), at most this often: a killed git whose
    // child (a hook's `sleep 30`) inherited the descriptor holds the
    // connection open, yet its session is over. 0: never checked.
    std::chrono::milliseconds writer_exit_check{1000};

    // The settings that fill these (docs/configuration.md); the bounds on
    // connections are the daemon's, from its descriptor limit
    // (daemon/app/sources.cpp). `Self` is Options or const Options.
    template <typename Self, typename Visitor>
    static void visit_settings(Self& o, Visitor& v) {
      using settings::k_hour_ms;
      using settings::Key;
      using settings::Range;
      v.integer(Key{"stream", "silent_timeout_ms", "--stream-silent-timeout-ms", "MS",
                    "Close a stream connection that sends nothing this long (0: never)"},
                o.silent_timeout, Range{0, k_hour_ms});
    }
  };

  // What `on_empty` is told, on the reader's thread: the last open
  // connection has been closed (`handed_over` false), or a pass that closes
  // everything (close_all()) is done and all it read and counted is handed
  // over (true): only then may the pipeline behind it stop.
  using OnEmpty = std::function<void(bool handed_over)>;
  StreamReader(ingest::IngestSink& sink, Options options, OnEmpty on_empty);
  // Drains and closes whatever is still open, then joins the thread.
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  // Takes over a connected, non-blocking socket. Thread-safe.
  void add(UniqueFd socket, const ingest::Origin& origin);
  // Accepts connections on `listener` (listening, non-blocking) from now on,
  // on the reader's thread: a git process then costs the daemon one wake-up
  // to accept it and about one more to read it whole. The caller keeps the
  // listener open until stop_accepting() has returned.
  void accept_from(int listener);
  // Takes in every connection the backlog still holds (their writes are in
  // the kernel already), then stops accepting. Returns once the reader no
  // longer touches the listener. Thread-safe; not from `on_empty`.
  void stop_accepting();
  // From now on, every connection (also those added later) is read until
  // what it holds is drained, then closed. Thread-safe.
  void close_all();

  [[nodiscard]] std::size_t open_connections() const;

 private:
  class Connection;
  // What one uid holds, on the reader's thread.
  struct Holder {
    // Quietest first: a connection moves to the back whenever it is read.
    std::list<Connection*> connections;
    std::size_t partial_bytes = 0;       // allocated for unfinished lines
    std::size_t partial_line_bytes = 0;  // of unfinished lines received
    std::uint64_t refused = 0;  // since last reported
  };
  // Connections left unarmed until their time, soonest first. Each knows
  // its entry, so closing one costs O(1), not a pass over all of them: in
  // a burst of short processes most connections close while paced.
  using Paced = DueQueue<Connection>;

  void run();
  // Accepts every connection the backlog holds; false when accepting failed
  // for another reason than an empty backlog.
  bool accept_pending(int listener, std::chrono::steady_clock::time_point now);
  void adopt(UniqueFd socket, std::chrono::steady_clock::time_point now);
  // Makes room for one more connection of `uid`: false when the new one is
  // to be refused instead.
  bool make_room(std::int64_t uid, std::chrono::steady_clock::time_point now);
  // Reads the holder's oldest connections until one turns out to have hung
  // up, and finishes it; false when none of the first few had.
  bool reap_finished(Holder& holder);
  // For reads outside the paced one (their writers gone, or being closed):
  // past k_reap_share of the memory bound, drop and count.
  [[nodiscard]] bool reap_over_bound() const;
  // Closes the holder's connection quiet for longest, if one has been quiet
  // for a second (or whatever it is, with `even_busy`); false when none was.
  bool close_quietest(Holder& holder, std::chrono::steady_clock::time_point now, bool even_busy, const char* why);
  void close_silent(std::chrono::steady_clock::time_point now);
  void check_writers(std::chrono::steady_clock::time_point now);
  void forget_closed_unheard();
  void report_refusals(std::chrono::steady_clock::time_point now);
  void account_partial(Connection& connection);
  void heard_from(Connection& connection);
  void register_connection(Connection& connection, std::uint32_t events);
  void arm_listener();
  void release_listener();
  void service(Connection& connection, std::chrono::steady_clock::time_point now);
  void arm(Connection& connection);
  // Arms it `delay` after `now` (unless it is paced already: then when that says).
  void pace(Connection& connection, std::chrono::steady_clock::time_point now,
            std::chrono::steady_clock::duration delay);
  void finish(Connection& connection);
  void close_everything();
  void wake();

  ingest::IngestSink& m_sink;
  Options m_options;
  OnEmpty m_on_empty;
  UniqueFd m_epoll;
  UniqueFd m_wake;  // eventfd: new work for the thread (close_all, stop)
  mutable std::mutex m_mutex;
  std::unordered_map<Connection*, std::unique_ptr<Connection>> m_connections;
  Paced m_paced;  // the reader thread's own
  // When the listener is armed again (accepts are gathered, or retried).
  std::optional<std::chrono::steady_clock::time_point> m_listener_due;
  std::unordered_map<std::int64_t, Holder> m_holders;  // by uid; the reader thread's own
  std::vector<std::unique_ptr<Connection>> m_finished;  // closed in this round
  std::size_t m_held = 0;  // connections in m_holders
  // Connections that had sent nothing yet, oldest first, with their channel
  // id (an address can be reused once a connection is gone).
  std::deque<std::tuple<std::chrono::steady_clock::time_point, Connection*, std::uint64_t>> m_unheard;
  std::chrono::steady_clock::time_point m_next_refusal_report{};
  std::chrono::steady_clock::time_point m_next_writer_check{};
  std::vector<char> m_buffer = std::vector<char>(256 * 1024);  // the reader thread's own
  std::atomic<bool> m_closing{false};
  std::atomic<bool> m_stopping{false};
  // The listener, and the hand-shake that takes it back (under m_mutex).
  std::atomic<int> m_listener{-1};
  bool m_listener_release_asked = false;
  bool m_listener_released = false;
  std::condition_variable m_listener_cv;
  std::chrono::steady_clock::time_point m_next_accept_warning{};
  std::thread m_thread;
};

}  // namespace trace2d::source
