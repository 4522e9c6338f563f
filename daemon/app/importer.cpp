#include "daemon/app/importer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "daemon/app/backend.hpp"
#include "daemon/ingest/line_framer.hpp"
#include "daemon/source/trace_file_checks.hpp"
#include "daemon/source/trace_file_reader.hpp"
#include "daemon/source/unique_fd.hpp"
#include "db/file_offsets.hpp"
#include "proto/fnv1a.hpp"
#include "proto/parser.hpp"

namespace trace2d::app {
namespace {

std::vector<std::string> expand(const std::vector<std::string>& paths, bool& ok) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    const auto status = std::filesystem::symlink_status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
      spdlog::error("import: '{}' does not exist", path);
      ok = false;
    } else if (std::filesystem::is_directory(status)) {
      std::vector<std::string> inside;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path, ec)) {
        if (entry.is_regular_file() && !entry.is_symlink()) {
          inside.push_back(entry.path().string());
        }
      }
      std::sort(inside.begin(), inside.end());
      files.insert(files.end(), inside.begin(), inside.end());
    } else if (std::filesystem::is_regular_file(status)) {
      files.push_back(path);
    } else {
      spdlog::error("import: '{}' is not a regular file or directory", path);
      ok = false;
    }
  }
  return files;
}

class Progress {
 public:
  explicit Progress(std::size_t files) : m_files(files), m_tty(::isatty(STDERR_FILENO) == 1) {}
  void update(std::size_t done, std::uint64_t bytes, std::uint64_t lines) {
    if (!m_tty) {
      return;
    }
    constexpr int k_width = 30;
    const int filled = m_files == 0 ? k_width : static_cast<int>(k_width * done / m_files);
    std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu files, %.1f MiB, %llu lines", filled,
                 "##############################", k_width - filled, "", done, m_files,
                 static_cast<double>(bytes) / (1024.0 * 1024.0), static_cast<unsigned long long>(lines));
    std::fflush(stderr);
  }
  void done() {
    if (m_tty) {
      std::fputc('\n', stderr);
    }
  }

 private:
  std::size_t m_files;
  bool m_tty;
};

// The first line (git's `version` event, with its SID and time) tells one
// trace from another, and stays the same when a file grows; nullopt for an
// empty file.
std::optional<std::string> import_key(int fd) {
  char head[4096];
  const ssize_t n = ::pread(fd, head, sizeof head, 0);
  if (n <= 0) {
    return std::nullopt;
  }
  std::string_view first(head, static_cast<std::size_t>(n));
  first = first.substr(0, first.find('\n'));
  return fmt::format("import:{:016x}", proto::fnv1a(first));
}

std::string plural(std::uint64_t count, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

}  // namespace

int run_import(const DaemonOptions& options, const std::vector<std::string>& paths) {
  bool ok = true;
  const std::vector<std::string> files = expand(paths, ok);

  BackendOptions backend_options;
  backend_options.db_path = options.db_path;
  backend_options.max_queue_bytes = options.max_queue_bytes;
  backend_options.max_line_bytes = options.max_line_bytes;
  backend_options.writer.commit_interval = std::chrono::milliseconds(100);  // nobody waits on an import
  backend_options.worker.redact_url_credentials = options.ingest_worker.redact_url_credentials;
  // One sender, reading as fast as the pipeline takes it: the pipeline's
  // pressure only slows the reading, and nothing is dropped.
  backend_options.worker.per_uid_lines_per_second = 0;
  Backend backend(backend_options);
  const auto offsets = db::read_file_offsets(options.db_path, "import:");
  auto sink = backend.make_sink();
  backend.start();

  ingest::LineFramer::Limits framing;
  framing.max_line_bytes = options.max_line_bytes;
  Progress progress(files.size());
  std::uint64_t total_bytes = 0;
  std::uint64_t total_lines = 0;
  std::size_t skipped = 0;
  std::size_t not_traces = 0;
  proto::Parser parser;
  proto::Event event;
  for (std::size_t index = 0; index < files.size(); ++index) {
    const std::string& path = files[index];
    source::UniqueFd fd = source::TraceFileReader::open_file(path);
    if (!fd) {
      spdlog::error("import: cannot open '{}': {}", path, std::strerror(errno));
      ok = false;
      continue;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      spdlog::error("import: '{}' is not a regular file", path);
      ok = false;
      continue;
    }
    // A sparse file would be read as zeros for hours; one over the
    // directories' size cap is refused as the watcher refuses it.
    if (const auto problem = source::oversized_or_sparse(st, options.directories.max_file_bytes)) {
      spdlog::error("import: '{}' refused: {}", path, *problem);
      ok = false;
      continue;
    }
    const std::optional<std::string> key = import_key(fd.get());
    std::uint64_t offset = 0;
    if (key) {
      if (const auto found = offsets.find(*key); found != offsets.end()) {
        offset = found->second.offset;
      }
    }
    if (!key || offset >= static_cast<std::uint64_t>(st.st_size)) {
      ++skipped;  // empty, or imported before and unchanged since
      progress.update(index + 1, total_bytes, total_lines);
      continue;
    }

    source::TraceFileReader reader(
        std::move(fd), {path, *key, ingest::SourceKind::import, sink->next_channel_id(), static_cast<std::int64_t>(st.st_uid)},
        framing);
    reader.resume_at(offset);
    // Back-pressure instead of drops: an import waits for the writer.
    const auto wait_for_room = [&] {
      backend.budget().wait_for_room();
      progress.update(index, total_bytes + (reader.read_offset() - offset), total_lines);
      return false;
    };
    // One line that parses as a Trace2 event is enough to call it a trace
    // file; a file without any is most likely not one (its lines are stored
    // as rejects all the same).
    bool has_event = false;
    const auto check_line = [&](std::string_view line) {
      ++total_lines;
      if (!has_event) {
        has_event = static_cast<bool>(parser.parse(line, 0, event));
      }
    };
    const auto read = reader.read(*sink, UINT64_MAX, source::TraceFileReader::FinishAt::end,
                                  source::TraceFileReader::Removal::keep, wait_for_room, check_line);
    total_bytes += read.bytes;
    if (!has_event && read.bytes > 0) {
      ++not_traces;
      spdlog::warn("import: '{}' has no Trace2 event line: is it a trace file? (its lines are stored as rejects)",
                   path);
    }
    progress.update(index + 1, total_bytes, total_lines);
  }
  backend.finish(options.store_give_up_after);
  progress.done();

  const auto& counts = backend.worker().counters().of(ingest::SourceKind::import);
  std::string summary = fmt::format("imported {} ({} already imported): {}, {}",
                                    plural(files.size() - skipped, "file", "files"), skipped,
                                    plural(counts.events.load(), "event", "events"),
                                    plural(counts.rejects.load(), "rejected line", "rejected lines"));
  if (not_traces > 0) {
    summary += fmt::format("; {} no Trace2 event", plural(not_traces, "file has", "files have"));
  }
  std::fprintf(stderr, "%s\n", summary.c_str());
  return ok && backend.writer().abandoned_events() == 0 ? 0 : 1;
}

}  // namespace trace2d::app
