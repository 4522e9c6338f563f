#pragma once
// Trace directories (`GIT_TRACE2_EVENT=/var/log/git-trace2/`): git writes one
// file per process there. The watcher tails each file with inotify while git
// writes it and hands its lines to the pipeline together with the file's
// position, which is committed in the same transaction as the events; a
// restart resumes exactly there, so nothing is lost or read twice.
//
// A file is finished when its writer closes it (IN_CLOSE_WRITE) or its
// process's `atexit` arrives; then it is removed once committed (unless
// configured otherwise). A file that stays silent for the idle timeout is
// closed and its session left incomplete, but kept: should it grow again,
// reading resumes. The `git-trace2-discard` sentinel is ingested like any
// trace and always removed, so that git resumes tracing. Symbolic links,
// directories, FIFOs and dot-files are never opened.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/pipeline/ingest_sink.hpp"
#include "daemon/pipeline/line_framer.hpp"
#include "daemon/source/asio.hpp"

namespace trace2d::source {

inline constexpr std::string_view k_discard_sentinel = "git-trace2-discard";

class DirWatcher {
 public:
  struct Options {
    std::vector<std::string> dirs;
    bool delete_finished = true;
    std::chrono::milliseconds idle_timeout{std::chrono::minutes(1)};
    pipeline::LineFramer::Limits framing;
  };

  // `db_path`: where the committed file positions are read from at start.
  DirWatcher(asio::io_context& io, pipeline::IngestSink& sink, std::string db_path, Options options);
  ~DirWatcher();
  DirWatcher(const DirWatcher&) = delete;
  DirWatcher& operator=(const DirWatcher&) = delete;

  // Watches the directories and ingests the files already there.
  void start();
  // Reads what the open files hold (their positions are committed with it)
  // and stops. Thread-safe.
  void stop();
  // New directory list, timeouts, deletion policy (SIGHUP). Thread-safe.
  void reconfigure(Options options);

  [[nodiscard]] std::uint64_t sentinels_seen() const { return m_sentinels.load(); }
  [[nodiscard]] std::size_t open_files() const { return m_open_files.load(); }

 private:
  struct Dir;
  struct TracedFile;

  asio::awaitable<void> read_events();
  asio::awaitable<void> tick();
  void watch(const std::string& dir);
  void unwatch(int wd);
  void scan(const std::string& dir);
  void on_event(int wd, std::uint32_t mask, std::string_view name);
  void open_file(const std::string& dir, const std::string& name);
  // Reads what the file holds beyond what was read and hands it on; with
  // `finish`, or once its atexit is read, as the file's last chunk. Returns
  // whether the file is finished (the caller then forgets it).
  bool read_file(TracedFile& file, bool finish);
  void finish_file(const std::string& path, bool closed_by_writer);
  void forget(std::map<std::string, std::unique_ptr<TracedFile>>::iterator found);
  void submit(TracedFile& file, pipeline::IngestChunk&& chunk, bool finished, bool remove);
  // Held back at the memory bound, files are read again soon, not at the
  // next one-second tick.
  void catch_up_soon();
  void catch_up();

  asio::io_context& m_io;
  asio::strand<asio::io_context::executor_type> m_strand;
  pipeline::IngestSink& m_sink;
  std::string m_db_path;
  Options m_options;
  int m_inotify = -1;
  std::unique_ptr<asio::posix::stream_descriptor> m_events;
  asio::steady_timer m_timer;
  asio::steady_timer m_catch_up_timer;
  bool m_catch_up_armed = false;
  std::unordered_map<int, std::string> m_dirs;  // watch descriptor -> directory
  std::map<std::string, std::unique_ptr<TracedFile>> m_files;  // by path
  // Positions committed by earlier runs: key -> (offset, finished).
  std::map<std::string, std::pair<std::uint64_t, bool>> m_committed;
  // Files finished in this run, path -> key (their removal waits for the
  // commit; the entry goes when the file does).
  std::map<std::string, std::string> m_finished;
  bool m_stopping = false;
  std::atomic<std::uint64_t> m_sentinels{0};
  std::atomic<std::size_t> m_open_files{0};
};

}  // namespace trace2d::source
