#pragma once
// Lines read from one source in one go, handed from a reader to the pipeline.

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/ingest/lost_lines.hpp"
#include "daemon/ingest/origin.hpp"

namespace trace2d::ingest {

struct IngestChunk {
  struct Line {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;       // bytes kept (without the '\n')
    std::uint64_t full_size = 0;  // bytes received; larger than `size` when cut short
    std::uint32_t origin = 0;     // index into `origins`
  };

  // Where the lines came from. Usually one; a datagram socket has a sender
  // per datagram.
  std::vector<ingest::Origin> origins;
  std::int64_t received_us = 0;
  // The lines back to back, followed by padding so they can be parsed in place.
  std::string bytes;
  std::vector<Line> lines;
  // The channel (connection, file) ended after these lines.
  bool end_of_channel = false;
  // The process that opened the channel has exited, though the channel is
  // still open (a child of it inherited the descriptor): nothing more will
  // come from that process.
  bool writer_exited = false;
  // Lines the reader read and dropped at the memory bound (its uid's
  // share), since its last chunk: in all, and by the session they belong to
  // (drop_line()), so that each session records what it lost.
  std::uint64_t dropped_lines = 0;
  std::uint64_t dropped_bytes = 0;
  struct Dropped {
    std::string sid;  // empty: the channel's current session (or, for `anonymous`, none)
    std::uint32_t origin = 0;
    bool anonymous = false;  // past the chunk's bound of named sessions: counted for its uid
    std::uint64_t lines = 0;
    std::uint64_t bytes = 0;
  };
  std::vector<Dropped> dropped;
  // Sessions a chunk names in `dropped`: a flood of lines with a fresh SID
  // each is counted per uid past this, at no cost per session.
  static constexpr std::size_t k_max_dropped_sessions = 16;
  // The reader refused or closed channels on its own (a sparse or oversized
  // trace file, a hard link; a connection over its uid's bound, or silent):
  // stored as a reject with this reason. Empty otherwise.
  std::string refused;
  std::uint64_t refused_bytes = 0;

  // A file source's position after this chunk's lines, committed with them.
  struct FileProgress {
    std::string key;   // identifies the file across restarts
    std::string path;
    std::uint64_t offset = 0;  // bytes consumed, up to the end of the last whole line
    bool finished = false;
    bool remove_after_commit = false;
    bool forget = false;  // the file is gone: drop its remembered position
    bool refused = false;  // never read: removed (when asked) even if it grew since
  };
  std::optional<FileProgress> progress;

  // What the chunk's memory was charged to, by uid (set by IngestSink;
  // released alike by the pipeline once the chunk is done).
  std::vector<std::pair<std::int64_t, std::size_t>> charges;

  void add_line(std::string_view line, std::uint64_t full_size, std::uint32_t origin = 0) {
    lines.push_back(Line{static_cast<std::uint32_t>(bytes.size()),
                         static_cast<std::uint32_t>(line.size()), full_size, origin});
    bytes.append(line);
  }
  // A line dropped at the memory bound: counted for the session its head names.
  void drop_line(std::string_view line, std::uint64_t full_size, std::uint32_t origin = 0) {
    ++dropped_lines;
    dropped_bytes += full_size;
    std::string_view sid = sid_in_head(line);
    if (!dropped.empty() && dropped.back().origin == origin && !dropped.back().anonymous &&
        dropped.back().sid == sid) {
      ++dropped.back().lines;
      dropped.back().bytes += full_size;
      return;
    }
    std::size_t named = 0;
    for (Dropped& entry : dropped) {
      if (entry.origin == origin && !entry.anonymous && entry.sid == sid) {
        ++entry.lines;
        entry.bytes += full_size;
        return;
      }
      named += entry.anonymous ? 0 : 1;
    }
    const bool anonymous = named >= k_max_dropped_sessions;
    if (anonymous) {
      sid = {};
      for (Dropped& entry : dropped) {
        if (entry.origin == origin && entry.anonymous) {
          ++entry.lines;
          entry.bytes += full_size;
          return;
        }
      }
    }
    dropped.push_back(Dropped{std::string(sid), origin, anonymous, 1, full_size});
  }
  [[nodiscard]] const ingest::Origin& origin_of(const Line& line) const { return origins[line.origin]; }
  // The channel (connection, file) these lines belong to.
  [[nodiscard]] const ingest::Origin& channel_origin() const { return origins.front(); }
  // Call once all lines are in: adds the parser's padding after the last one.
  void seal(std::size_t padding) { bytes.append(padding, '\0'); }

  [[nodiscard]] std::string_view line_text(const Line& line) const {
    return std::string_view(bytes).substr(line.offset, line.size);
  }
  // Readable bytes after a line (the following lines and the padding).
  [[nodiscard]] std::size_t readable_after(const Line& line) const {
    return bytes.size() - line.offset - line.size;
  }
  [[nodiscard]] std::size_t memory_bytes() const {
    return bytes.capacity() + lines.capacity() * sizeof(Line) + sizeof(IngestChunk) +
           dropped.capacity() * (sizeof(Dropped) + 64);
  }
};

}  // namespace trace2d::ingest
