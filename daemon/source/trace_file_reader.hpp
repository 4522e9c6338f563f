#pragma once
// One trace file, read from where an earlier run's commit left it, as chunks
// of whole lines that carry the file's position: the position is committed
// in the same transaction as the lines before it, so a restart neither loses
// nor repeats a line. The directory watcher and `trace2d import` both read
// their files with it.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/ingest/ingest_sink.hpp"
#include "daemon/ingest/line_framer.hpp"
#include "daemon/ingest/origin.hpp"
#include "daemon/source/unique_fd.hpp"

namespace trace2d::source {

class TraceFileReader {
 public:
  struct Identity {
    std::string path;
    std::string key;  // names the file across restarts (file_offsets.key)
    ingest::SourceKind kind = ingest::SourceKind::dir;
    std::uint64_t channel = 0;
    std::int64_t owner_uid = 0;  // whom its lines are charged to
  };

  // O_NOFOLLOW: a symbolic link is never followed out of where it was found.
  // O_NONBLOCK: opening a FIFO must not hang the daemon. Not a valid fd
  // (errno set) when it cannot be opened.
  [[nodiscard]] static UniqueFd open_file(const std::string& path);

  TraceFileReader(UniqueFd fd, Identity identity, ingest::LineFramer::Limits framing);

  // Continues at `offset`, a position committed earlier. Inside a line over
  // the length limit (the position moves on with discarded bytes), the rest
  // of that line is discarded.
  void resume_at(std::uint64_t offset);
  // The file grew after it was finished (git's atexit, or its writer gone):
  // another process appends to it, so it is read as a shared log.
  void appended_after_its_end() { m_shared = true; }

  // Why the file must not be read now (it grew over `max_bytes`, or became
  // sparse), or nullopt. Checked at every read, not only at open: a file can
  // change at any time.
  [[nodiscard]] std::optional<std::string> unfit(std::uint64_t max_bytes) const;

  enum class Stop { at_end, slice_full, paused };
  // When the file is complete: git's trace file ends with its `atexit`
  // event, but an imported file may hold many processes and ends at its end.
  // A file found to hold more than one process (shared()) ends only at
  // `end`: its other writers may append at any time.
  enum class FinishAt { atexit, atexit_or_end, end };
  // Whether a finished file goes once its lines are committed: never, only
  // when it is its process's own (named after its session, as git names
  // its files in a trace directory, and holding no other session), or in
  // any case (git's discard sentinel).
  enum class Removal { keep, own_file, always };
  struct ReadResult {
    Stop stop = Stop::at_end;
    std::uint64_t bytes = 0;
    bool finished = false;  // handed on as finished: read no more
  };
  // Reads at most `slice_bytes`, asking `pause` before every read (true:
  // stop here, the rest later). Lines go to `sink` in chunks of about 1 MiB,
  // the last ones before returning; a line without its newline yet waits,
  // unless the file is complete (`finish_at`), when it goes too, with the
  // position marked finished in the same chunk (committed together).
  // `on_line` (may be empty) sees every line handed on.
  ReadResult read(ingest::IngestSink& sink, std::uint64_t slice_bytes, FinishAt finish_at, Removal removal,
                  const std::function<bool()>& pause, const std::function<void(std::string_view)>& on_line = {});

  // The rest of the file is refused: one reject with `reason`, and the file
  // finished at its size, so that neither a restart nor its growth reads
  // what was refused (what is appended later is read, and checked, anew).
  void refuse(ingest::IngestSink& sink, const std::string& reason, std::optional<std::int64_t> peer_uid,
              bool remove_after_commit);

  [[nodiscard]] const Identity& identity() const { return m_identity; }
  [[nodiscard]] int fd() const { return m_fd.get(); }
  [[nodiscard]] std::uint64_t read_offset() const { return m_read_offset; }
  // git's last event: the file is complete even if its writer keeps it open.
  [[nodiscard]] bool saw_atexit() const { return m_saw_atexit; }
  // Lines of two sessions read from it: not one git's file in a trace
  // directory but a log many append to (GIT_TRACE2_EVENT naming a file).
  [[nodiscard]] bool shared() const { return m_shared; }
  // Named after the session it holds (its SID's last component, or that
  // with ".1".."9": git's and the client library's names in a trace
  // directory), and holding no other.
  [[nodiscard]] bool own_file() const;

 private:
  void submit(ingest::IngestSink& sink, ingest::IngestChunk&& chunk, bool finished, bool remove_after_commit);

  UniqueFd m_fd;
  Identity m_identity;
  ingest::LineFramer m_framer;
  std::uint64_t m_read_offset = 0;       // bytes read from the file
  std::uint64_t m_submitted_offset = 0;  // position handed on with the last chunk
  bool m_saw_atexit = false;
  std::string m_first_sid;  // of the first line that names one
  bool m_shared = false;
};

}  // namespace trace2d::source
