#pragma once
// Trace directories (`GIT_TRACE2_EVENT=/var/log/git-trace2/`): git writes one
// file per process there. The watcher tails each file with inotify while git
// writes it and hands its lines to the pipeline together with the file's
// position, which is committed in the same transaction as the events; a
// restart resumes exactly there, so nothing is lost or read twice.
//
// A file is finished when its writer closes it (IN_CLOSE_WRITE) or its
// process's `atexit` arrives; then it is removed once committed (unless
// configured otherwise) if it is its process's own, named after its SID as
// git names it; a file named otherwise may be a log others append to. A
// file silent for the idle timeout is finished too, unless the pid in its
// name runs and (where /proc shows it) belongs to the file's owner; after
// `max_silence` it is finished whatever its name claims. A file that grows
// after it was finished is read on from where it ended. A file that holds
// more than one session (GIT_TRACE2_EVENT naming a file: every git appends
// to it) is a log, not a process: no process's end finishes it, it is
// never removed, and it stays open until it is removed or silent for
// `max_silence`.
// The `git-trace2-discard` sentinel is ingested like any trace and always
// removed, so that git resumes tracing. Symbolic links, directories, FIFOs
// and dot-files are never opened.
//
// Every local user can write here, so what one file owner can take is
// bounded per owner: at most `max_open_files_per_uid` of their files are
// open (the rest wait unopened), a read takes at most a slice per wake-up
// and stops at the memory bound, and sparse, oversized and hard-linked files
// are refused unread with a reject row that names them.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/ingest/ingest_sink.hpp"
#include "daemon/ingest/line_framer.hpp"
#include "daemon/settings/setting.hpp"
#include "daemon/source/asio.hpp"
#include "daemon/source/trace_file_reader.hpp"
#include "db/file_offsets.hpp"

namespace trace2d::source {

inline constexpr std::string_view k_discard_sentinel = "git-trace2-discard";

class DirWatcher {
 public:
  struct Options {
    std::vector<std::string> dirs;
    bool delete_finished = true;
    std::chrono::milliseconds idle_timeout{std::chrono::minutes(1)};
    std::chrono::milliseconds max_silence{std::chrono::hours(1)};
    // A finished file keeps its place until its commit: enough places that
    // a stream of files never waits on the commits (10,000 files/s).
    std::size_t max_open_files_per_uid = 1024;  // also at most half of the next
    std::size_t max_open_files = 4096;          // also at most a quarter of RLIMIT_NOFILE
    std::uint64_t max_file_bytes = 1ULL << 30;  // 0: no cap
    ingest::LineFramer::Limits framing;         // limits.max_line_bytes, shared

    // The settings that fill these ([directories], docs/configuration.md);
    // `Self` is Options or const Options.
    template <typename Self, typename Visitor>
    static void visit_settings(Self& o, Visitor& v) {
      using settings::k_day_ms;
      using settings::Key;
      using settings::Range;
      using settings::Reload;
      v.list(Key{"directories", "watch", "--watch", "DIR",
                 "Trace directory to watch (repeatable; replaces the file's list)", Reload::live},
             o.dirs, absolute_dir_problem);
      v.boolean(Key{"directories", "delete_finished", "--delete-finished", "", "Remove trace files once stored",
                    Reload::live},
                o.delete_finished);
      v.integer(Key{"directories", "idle_timeout_ms", "--dir-idle-timeout-ms", "MS",
                    "A trace file that has not grown for this long is finished", Reload::live},
                o.idle_timeout, Range{1, 30 * k_day_ms});
      v.integer(Key{"directories", "max_silence_ms", "--dir-max-silence-ms", "MS",
                    "A trace file silent this long is finished even if its git seems to run", Reload::live},
                o.max_silence, Range{1, 30 * k_day_ms});
      v.integer(Key{"directories", "max_open_files_per_uid", "--dir-max-open-files-per-uid", "N",
                    "Trace files of one owner read at once", Reload::live},
                o.max_open_files_per_uid, Range{1, 1LL << 20});
      v.integer(Key{"directories", "max_open_files", "--dir-max-open-files", "N", "Trace files read at once in all",
                    Reload::live},
                o.max_open_files, Range{1, 1LL << 20});
      v.integer(Key{"directories", "max_file_bytes", "--dir-max-file-bytes", "BYTES",
                    "Refuse trace files larger than this (0: no cap)", Reload::live},
                o.max_file_bytes, Range{0, 1LL << 50});
    }
    static std::string absolute_dir_problem(const std::string& path) {
      return path.empty() || path.front() != '/' ? "lists a directory that is not absolute: '" + path + "'"
                                                 : std::string();
    }
  };

  // `db_path`: where the committed file positions are read from at start.
  DirWatcher(asio::io_context& io, ingest::IngestSink& sink, std::string db_path, Options options);
  ~DirWatcher();
  DirWatcher(const DirWatcher&) = delete;
  DirWatcher& operator=(const DirWatcher&) = delete;

  // Watches the directories and ingests the files already there.
  void start();
  // Reads at most a slice more of each open file, within the memory bound
  // (their positions are committed with it), and stops: a huge file never
  // delays the exit, the next run resumes at its position. Thread-safe.
  void stop();
  // New directory list, timeouts, deletion policy (SIGHUP). Thread-safe.
  void reconfigure(Options options);

  [[nodiscard]] std::uint64_t sentinels_seen() const { return m_sentinels.load(); }
  [[nodiscard]] std::size_t open_files() const { return m_open_files.load(); }

 private:
  struct TracedFile;
  // A file beyond its owner's (or the overall) cap on open files: opened
  // once a slot frees.
  struct Waiting {
    std::string dir;
    std::string name;
  };
  enum class ReadOutcome { more_later, finished };
  using FileMap = std::map<std::string, std::unique_ptr<TracedFile>>;

  asio::awaitable<void> read_events();
  asio::awaitable<void> tick();
  void watch(const std::string& dir);
  void scan(const std::string& dir);
  void on_event(int wd, std::uint32_t mask, std::string_view name);
  void open_file(const std::string& dir, const std::string& name, bool closed_by_writer);
  // Reads at most one slice of what the file holds beyond what was read and
  // hands it on (a file with more is read again after the io thread's other
  // work); at the end of a file its writer closed, or once its atexit is
  // read, as the file's last chunk.
  ReadOutcome read_file(TracedFile& file);
  // The file is refused from now on: a reject row says why; it is finished
  // (and removed, as finished files are) without reading further.
  void refuse(TracedFile& file, const std::string& reason, std::optional<std::int64_t> peer_uid);
  void forget(FileMap::iterator found);
  [[nodiscard]] bool remove_when_finished(const TracedFile& file) const;
  // What read() is told: a finished file goes only if it is its process's
  // own (a shared log, or a file named otherwise, stays); the sentinel goes.
  [[nodiscard]] TraceFileReader::Removal removal(const TracedFile& file) const;
  // Whether the pid in the file's name vouches for a writer still at work.
  [[nodiscard]] bool writer_running(const TracedFile& file) const;
  [[nodiscard]] std::size_t open_file_cap() const;
  [[nodiscard]] std::size_t open_file_cap_per_uid() const;
  [[nodiscard]] bool over_budget() const;
  [[nodiscard]] bool over_budget(std::int64_t uid) const;
  void wait_for_slot(std::int64_t uid, const std::string& dir, const std::string& name, bool closed_by_writer);
  void post_once(bool& posted, void (DirWatcher::*work)());
  void open_waiting_soon();
  void open_waiting();
  void read_more_soon(const std::string& path);
  void read_more();
  // Held back at the memory bound, files are read again soon, not at the
  // next one-second tick.
  void catch_up_soon();
  void catch_up();

  asio::io_context& m_io;
  asio::strand<asio::io_context::executor_type> m_strand;
  ingest::IngestSink& m_sink;
  std::string m_db_path;
  Options m_options;
  std::size_t m_fd_limit_cap = 0;  // a quarter of RLIMIT_NOFILE
  int m_inotify = -1;
  std::unique_ptr<asio::posix::stream_descriptor> m_events;
  asio::steady_timer m_timer;
  asio::steady_timer m_catch_up_timer;
  bool m_catch_up_armed = false;
  std::unordered_map<int, std::string> m_dirs;  // watch descriptor -> directory
  FileMap m_files;  // open, by path
  std::map<std::int64_t, std::size_t> m_open_per_uid;
  // Waiting for a slot, per owner, oldest first; the map says which paths
  // wait (and whether their writer closed them meanwhile).
  std::map<std::int64_t, std::deque<Waiting>> m_waiting;
  std::unordered_map<std::string, bool> m_waiting_paths;
  bool m_open_waiting_posted = false;
  // More names than a waiting list holds: a rescan finds them later.
  bool m_rescan = false;
  // Files whose last read stopped at the slice, read again after the io
  // thread's other work.
  std::vector<std::string> m_more;
  bool m_read_more_posted = false;
  // Positions committed by earlier runs, by key.
  std::map<std::string, db::SavedFileOffset> m_committed;
  // Files finished in this run, by path: their key and the size read (their
  // removal waits for the commit; the entry goes when the file does). One
  // that grows again is read on from there.
  struct Finished {
    std::string key;
    std::uint64_t size = 0;
  };
  std::map<std::string, Finished> m_finished;
  bool m_stopping = false;
  std::atomic<std::uint64_t> m_sentinels{0};
  std::atomic<std::size_t> m_open_files{0};
};

}  // namespace trace2d::source
