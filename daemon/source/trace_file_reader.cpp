#include "daemon/source/trace_file_reader.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "daemon/source/trace_file_checks.hpp"

namespace trace2d::source {
namespace {

constexpr std::size_t k_read_bytes = 256 * 1024;
constexpr std::size_t k_chunk_bytes = 1024 * 1024;

std::vector<char>& read_buffer() {
  thread_local std::vector<char> buffer(k_read_bytes);
  return buffer;
}

// The value of a line's "sid" as written (escapes and all: it is only
// compared), or empty. git writes `"sid":"` right after `"event"`, so the
// search ends early.
std::string_view sid_text(std::string_view line) {
  constexpr std::string_view k_key = "\"sid\":\"";
  const std::size_t key = line.find(k_key);
  if (key == std::string_view::npos) {
    return {};
  }
  const std::size_t start = key + k_key.size();
  std::size_t end = start;
  while (end < line.size() && line[end] != '"') {
    end += line[end] == '\\' ? 2 : 1;
  }
  return end < line.size() ? line.substr(start, end - start) : std::string_view();
}

}  // namespace

UniqueFd TraceFileReader::open_file(const std::string& path) {
  return UniqueFd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
}

TraceFileReader::TraceFileReader(UniqueFd fd, Identity identity, ingest::LineFramer::Limits framing)
    : m_fd(std::move(fd)), m_identity(std::move(identity)), m_framer(framing) {}

void TraceFileReader::resume_at(std::uint64_t offset) {
  m_read_offset = offset;
  m_submitted_offset = offset;
  char before_offset = '\n';
  if (offset > 0 && ::pread(m_fd.get(), &before_offset, 1, static_cast<off_t>(offset - 1)) == 1 &&
      before_offset != '\n') {
    m_framer.resume_inside_long_line();
  }
}

std::optional<std::string> TraceFileReader::unfit(std::uint64_t max_bytes) const {
  struct stat st {};
  if (::fstat(m_fd.get(), &st) != 0) {
    return std::nullopt;  // the next read reports what is wrong
  }
  return oversized_or_sparse(st, max_bytes);
}

bool TraceFileReader::own_file() const {
  if (m_shared || m_first_sid.empty()) {
    return false;
  }
  const std::string_view path = m_identity.path;
  std::string_view name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 2 && name[name.size() - 2] == '.' && name.back() >= '1' && name.back() <= '9') {
    name.remove_suffix(2);
  }
  const std::string_view sid = m_first_sid;
  return name == sid.substr(sid.find_last_of('/') + 1);
}

TraceFileReader::ReadResult TraceFileReader::read(ingest::IngestSink& sink, std::uint64_t slice_bytes,
                                                  FinishAt finish_at, Removal removal,
                                                  const std::function<bool()>& pause,
                                                  const std::function<void(std::string_view)>& on_line) {
  std::vector<char>& buffer = read_buffer();
  ingest::IngestChunk chunk;
  const auto add_line = [&](std::string_view line, std::uint64_t full_size) {
    chunk.add_line(line, full_size);
    if (!m_saw_atexit && line.find("\"event\":\"atexit\"") != std::string_view::npos) {
      m_saw_atexit = true;
    }
    if (const std::string_view sid = m_shared ? std::string_view() : sid_text(line); !sid.empty()) {
      if (m_first_sid.empty()) {
        m_first_sid = sid;
      } else if (sid != m_first_sid) {
        m_shared = true;
      }
    }
    if (on_line) {
      on_line(line);
    }
  };
  ReadResult result;
  while (true) {
    if (result.bytes >= slice_bytes) {
      result.stop = Stop::slice_full;
      break;
    }
    // Asked before every read, not only the first: a big file must not be
    // read whole into the queue.
    if (pause && pause()) {
      result.stop = Stop::paused;
      break;
    }
    const ssize_t n = ::pread(m_fd.get(), buffer.data(), buffer.size(), static_cast<off_t>(m_read_offset));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      if (n < 0) {
        spdlog::warn("{}: reading '{}': {}", ingest::to_string(m_identity.kind), m_identity.path,
                     std::strerror(errno));
      }
      result.stop = Stop::at_end;
      break;
    }
    result.bytes += static_cast<std::uint64_t>(n);
    m_read_offset += static_cast<std::uint64_t>(n);
    sink.counters().bytes.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
    m_framer.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)), add_line);
    if (chunk.bytes.size() >= k_chunk_bytes) {
      submit(sink, std::move(chunk), false, false);
      chunk = ingest::IngestChunk();
    }
  }
  const bool at_end = result.stop == Stop::at_end;
  result.finished = m_shared
                        ? finish_at == FinishAt::end && at_end
                        : (finish_at != FinishAt::end && m_saw_atexit) || (finish_at != FinishAt::atexit && at_end);
  if (result.finished) {
    // The last lines and "finished" travel in one chunk, so they commit
    // together: a restart never finds the last line read but the file open.
    m_framer.finish(add_line);
    // A log others append to (a name the user chose) is not ours to remove,
    // and one that looked like a process's file may yet be appended to.
    submit(sink, std::move(chunk), true, removal == Removal::always || (removal == Removal::own_file && own_file()));
  } else if (!chunk.lines.empty() || m_framer.discarding()) {
    submit(sink, std::move(chunk), false, false);
  }
  return result;
}

void TraceFileReader::refuse(ingest::IngestSink& sink, const std::string& reason,
                             std::optional<std::int64_t> peer_uid, bool remove_after_commit) {
  struct stat st {};
  ingest::IngestChunk chunk;
  chunk.refused = reason;
  chunk.refused_bytes = ::fstat(m_fd.get(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  // Handled up to its size: a finished file that grows is read on from its
  // position, and what was refused must not be.
  m_read_offset = std::max(m_read_offset, chunk.refused_bytes);
  chunk.origins.assign(1, ingest::Origin{m_identity.kind, m_identity.channel, std::nullopt, peer_uid});
  chunk.progress = ingest::IngestChunk::FileProgress{
      .key = m_identity.key,
      .path = m_identity.path,
      .offset = m_read_offset,
      .finished = true,
      .remove_after_commit = remove_after_commit,
      .refused = true,
  };
  chunk.end_of_channel = true;
  sink.submit(std::move(chunk));
}

void TraceFileReader::submit(ingest::IngestSink& sink, ingest::IngestChunk&& chunk, bool finished,
                             bool remove_after_commit) {
  // Inside a line over the limit the position moves on with the discarded
  // bytes: a restart resumes there (discarding up to the next newline), not
  // at the line's start, which may be a terabyte back.
  const std::uint64_t position =
      finished || m_framer.discarding() ? m_read_offset : m_read_offset - m_framer.partial_size();
  if (!finished && chunk.lines.empty() && position == m_submitted_offset) {
    return;  // nothing new to commit
  }
  m_submitted_offset = position;
  chunk.origins.assign(1, ingest::Origin{m_identity.kind, m_identity.channel, std::nullopt, m_identity.owner_uid});
  chunk.progress = ingest::IngestChunk::FileProgress{m_identity.key, m_identity.path, position, finished,
                                                     remove_after_commit, false};
  chunk.end_of_channel = finished;
  sink.submit(std::move(chunk));
}

}  // namespace trace2d::source
