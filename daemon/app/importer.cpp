#include "daemon/app/importer.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "daemon/app/backend.hpp"
#include "daemon/ingest/line_framer.hpp"
#include "daemon/source/trace_file_checks.hpp"
#include "daemon/source/unique_fd.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::app {
namespace {

constexpr std::size_t k_read_bytes = 1024 * 1024;

// FNV-1a: stable across runs and builds, unlike std::hash.
std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

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

// Committed positions of earlier imports: key -> offset.
std::map<std::string, std::uint64_t> committed_offsets(const std::string& db_path) {
  std::map<std::string, std::uint64_t> offsets;
  db::Database db(db_path, db::OpenMode::read_only);
  db.set_busy_timeout(5000);
  db::Statement stmt = db.prepare("SELECT key, offset FROM file_offsets WHERE key LIKE 'import:%'");
  while (stmt.step()) {
    offsets[std::string(stmt.column_text(0))] = static_cast<std::uint64_t>(stmt.column_int(1));
  }
  return offsets;
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

}  // namespace

int run_import(const DaemonOptions& options, const std::vector<std::string>& paths) {
  bool ok = true;
  const std::vector<std::string> files = expand(paths, ok);

  BackendOptions backend_options;
  backend_options.db_path = options.db_path;
  backend_options.max_queue_bytes = options.max_queue_bytes;
  backend_options.max_line_bytes = options.max_line_bytes;
  backend_options.commit_interval = std::chrono::milliseconds(100);  // nobody waits on an import
  backend_options.redact_url_credentials = options.redact_url_credentials;
  Backend backend(backend_options);
  const auto offsets = committed_offsets(options.db_path);
  auto sink = backend.make_sink();
  backend.start();

  ingest::LineFramer::Limits framing;
  framing.max_line_bytes = options.max_line_bytes;
  Progress progress(files.size());
  std::uint64_t total_bytes = 0;
  std::uint64_t total_lines = 0;
  std::size_t skipped = 0;
  std::vector<char> buffer(k_read_bytes);
  for (std::size_t index = 0; index < files.size(); ++index) {
    const std::string& path = files[index];
    source::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
      spdlog::error("import: cannot open '{}': {}", path, std::strerror(errno));
      ok = false;
      continue;
    }
    struct stat st {};
    ::fstat(fd.get(), &st);
    // A sparse file would be read as zeros for hours; one over the
    // directories' size cap is refused as the watcher refuses it.
    if (const auto problem = source::oversized_or_sparse(st, options.dir_max_file_bytes)) {
      spdlog::error("import: '{}' refused: {}", path, *problem);
      ok = false;
      continue;
    }
    // The first line (git's `version` event, with its SID and time) tells one
    // trace from another, and stays the same when a file grows.
    const ssize_t head = ::pread(fd.get(), buffer.data(), 4096, 0);
    if (head <= 0) {
      ++skipped;
      continue;
    }
    std::string_view first(buffer.data(), static_cast<std::size_t>(head));
    first = first.substr(0, first.find('\n'));
    char key[40];
    std::snprintf(key, sizeof key, "import:%016llx", static_cast<unsigned long long>(fnv1a(first)));
    std::uint64_t offset = 0;
    if (const auto found = offsets.find(key); found != offsets.end()) {
      offset = found->second;
    }
    if (offset >= static_cast<std::uint64_t>(st.st_size)) {
      ++skipped;  // imported before, and unchanged since
      progress.update(index + 1, total_bytes, total_lines);
      continue;
    }

    const std::uint64_t channel = sink->next_channel_id();
    ingest::LineFramer framer(framing);
    const auto submit = [&](ingest::IngestChunk&& chunk, std::uint64_t position, bool finished) {
      // Back-pressure instead of drops: an import can wait for the writer.
      while (backend.budget().exhausted()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      chunk.origins.assign(1, ingest::Origin{ingest::SourceKind::import, channel, std::nullopt,
                                             static_cast<std::int64_t>(st.st_uid)});
      chunk.progress = ingest::IngestChunk::FileProgress{key, path, position, finished, false, false};
      chunk.end_of_channel = finished;
      chunk.received_us = proto::unix_now_us();
      total_lines += chunk.lines.size();
      sink->counters().lines.fetch_add(chunk.lines.size());
      chunk.seal(proto::Parser::padding_bytes());
      sink->submit(std::move(chunk));
    };
    while (true) {
      const ssize_t n = ::pread(fd.get(), buffer.data(), buffer.size(), static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        if (n < 0) {
          spdlog::error("import: reading '{}': {}", path, std::strerror(errno));
          ok = false;
        }
        break;
      }
      offset += static_cast<std::uint64_t>(n);
      total_bytes += static_cast<std::uint64_t>(n);
      ingest::IngestChunk chunk;
      framer.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)),
                  [&](std::string_view line, std::uint64_t full_size) { chunk.add_line(line, full_size); });
      submit(std::move(chunk), offset - framer.partial_size(), false);
      progress.update(index, total_bytes, total_lines);
    }
    ingest::IngestChunk last;
    framer.finish([&](std::string_view line, std::uint64_t full_size) { last.add_line(line, full_size); });
    submit(std::move(last), offset, true);
    progress.update(index + 1, total_bytes, total_lines);
  }
  backend.finish(options.store_give_up_after);
  progress.done();

  const auto& counts = backend.worker().counters().of(ingest::SourceKind::import);
  std::fprintf(stderr, "imported %zu files (%zu already imported): %llu events, %llu rejected lines\n",
               files.size() - skipped, skipped, static_cast<unsigned long long>(counts.events.load()),
               static_cast<unsigned long long>(counts.rejects.load()));
  return ok && backend.writer().abandoned_events() == 0 ? 0 : 1;
}

}  // namespace trace2d::app
