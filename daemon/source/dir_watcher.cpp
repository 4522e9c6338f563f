#include "daemon/source/dir_watcher.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "daemon/source/unique_fd.hpp"
#include "daemon/store/sqlite.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::source {
namespace {

constexpr std::uint32_t k_dir_events = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE |
                                       IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK;
constexpr std::size_t k_read_chunk = 256 * 1024;
constexpr std::size_t k_chunk_bytes = 1024 * 1024;

std::string file_key(ino_t inode, const std::string& path) {
  return "dir:" + std::to_string(inode) + ":" + path;
}

// git names its files after the SID's last component, "...-P<pid in hex>"
// (maybe with ".1".."9" after it). nullopt for names of other producers.
std::optional<pid_t> writer_pid(const std::string& name) {
  const auto p = name.rfind("-P");
  if (p == std::string::npos || p + 10 > name.size()) {
    return std::nullopt;
  }
  const std::string hex = name.substr(p + 2, 8);
  if (hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return std::nullopt;
  }
  return static_cast<pid_t>(std::stoul(hex, nullptr, 16));
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

std::vector<char>& read_buffer() {
  thread_local std::vector<char> buffer(k_read_chunk);
  return buffer;
}

}  // namespace

struct DirWatcher::TracedFile {
  std::string dir;
  std::string name;
  std::string path;
  std::string key;
  UniqueFd fd;
  std::optional<std::int64_t> owner_uid;
  std::uint64_t read_offset = 0;  // bytes read from the file
  pipeline::LineFramer framer;
  std::uint64_t channel = 0;
  std::chrono::steady_clock::time_point last_growth = std::chrono::steady_clock::now();
  bool saw_atexit = false;
  bool sentinel = false;

  explicit TracedFile(pipeline::LineFramer::Limits limits) : framer(limits) {}
};

DirWatcher::DirWatcher(asio::io_context& io, pipeline::IngestSink& sink, std::string db_path,
                       Options options)
    : m_io(io),
      m_strand(asio::make_strand(io)),
      m_sink(sink),
      m_db_path(std::move(db_path)),
      m_options(std::move(options)),
      m_timer(m_strand),
      m_catch_up_timer(m_strand) {}

DirWatcher::~DirWatcher() = default;

void DirWatcher::start() {
  m_inotify = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (m_inotify < 0) {
    throw std::runtime_error(std::string("inotify_init1: ") + std::strerror(errno));
  }
  m_events = std::make_unique<asio::posix::stream_descriptor>(m_strand, m_inotify);
  // Positions committed by earlier runs.
  try {
    store::Database db(m_db_path, store::OpenMode::read_only);
    db.set_busy_timeout(5000);
    store::Statement saved = db.prepare("SELECT key, offset, finished FROM file_offsets WHERE key LIKE 'dir:%'");
    while (saved.step()) {
      m_committed[std::string(saved.column_text(0))] = {static_cast<std::uint64_t>(saved.column_int(1)),
                                                   saved.column_int(2) != 0};
    }
  } catch (const store::SqliteError& e) {
    throw std::runtime_error(std::string("cannot read trace file positions: ") + e.what());
  }
  asio::post(m_strand, [this] {
    for (const std::string& dir : m_options.dirs) {
      watch(dir);
    }
    // Positions of files that are gone (removed after commit, or by someone
    // else) are forgotten.
    for (const auto& [key, saved] : m_committed) {
      const std::string path = key.substr(key.find(':', 4) + 1);
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) {
        pipeline::IngestChunk chunk;
        chunk.origins.push_back(Origin{SourceKind::dir, m_sink.next_channel_id(), {}, {}});
        chunk.progress = pipeline::IngestChunk::FileProgress{key, path, 0, true, false, true};
        chunk.received_us = proto::unix_now_us();
        chunk.seal(proto::Parser::padding_bytes());
        m_sink.submit(std::move(chunk));
      }
    }
  });
  asio::co_spawn(m_strand, read_events(), asio::detached);
  asio::co_spawn(m_strand, tick(), asio::detached);
}

void DirWatcher::stop() {
  asio::post(m_strand, [this] {
    m_stopping = true;
    for (auto& [path, file] : m_files) {
      read_file(*file, false);  // its position is committed with what it read
    }
    m_files.clear();
    m_open_files.store(0);
    m_timer.cancel();
    m_catch_up_timer.cancel();
    if (m_events) {
      boost::system::error_code ignored;
      m_events->cancel(ignored);
      m_events->close(ignored);
    }
  });
}

void DirWatcher::reconfigure(Options options) {
  asio::post(m_strand, [this, options = std::move(options)] {
    for (const std::string& dir : options.dirs) {
      if (std::find(m_options.dirs.begin(), m_options.dirs.end(), dir) == m_options.dirs.end()) {
        spdlog::info("dir: now watching {}", dir);
        watch(dir);
      }
    }
    for (const std::string& dir : m_options.dirs) {
      if (std::find(options.dirs.begin(), options.dirs.end(), dir) == options.dirs.end()) {
        spdlog::info("dir: no longer watching {}", dir);
        for (auto it = m_dirs.begin(); it != m_dirs.end();) {
          if (it->second == dir) {
            ::inotify_rm_watch(m_inotify, it->first);
            it = m_dirs.erase(it);
          } else {
            ++it;
          }
        }
      }
    }
    m_options = options;
  });
}

void DirWatcher::watch(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    spdlog::warn("dir: cannot watch '{}': not a directory (will retry)", dir);
    return;
  }
  const int wd = ::inotify_add_watch(m_inotify, dir.c_str(), k_dir_events | IN_DONT_FOLLOW);
  if (wd < 0) {
    spdlog::warn("dir: cannot watch '{}': {} (will retry)", dir, std::strerror(errno));
    return;
  }
  m_dirs[wd] = dir;
  scan(dir);  // what is already there
}

void DirWatcher::scan(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      names.emplace_back(entry->d_name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());  // oldest SIDs first
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    if (auto found = m_files.find(path); found != m_files.end()) {
      if (read_file(*found->second, false)) {
        forget(found);
      }
    } else {
      open_file(dir, name);
    }
  }
}

asio::awaitable<void> DirWatcher::read_events() {
  alignas(inotify_event) static thread_local char buffer[64 * 1024];
  while (!m_stopping) {
    boost::system::error_code ec;
    co_await m_events->async_wait(asio::posix::stream_descriptor::wait_read,
                                  asio::redirect_error(asio::use_awaitable, ec));
    if (m_stopping || ec) {
      break;
    }
    while (true) {
      const ssize_t n = ::read(m_inotify, buffer, sizeof buffer);
      if (n <= 0) {
        break;
      }
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        const std::string_view name = event->len > 0 ? std::string_view(event->name) : std::string_view();
        on_event(event->wd, event->mask, name);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
  }
}

void DirWatcher::on_event(int wd, std::uint32_t mask, std::string_view name) {
  if ((mask & IN_Q_OVERFLOW) != 0) {
    spdlog::warn("dir: inotify queue overflowed; rescanning");
    for (const auto& [w, dir] : std::map<int, std::string>(m_dirs.begin(), m_dirs.end())) {
      scan(dir);
    }
    return;
  }
  const auto dir_it = m_dirs.find(wd);
  if (dir_it == m_dirs.end()) {
    return;
  }
  const std::string dir = dir_it->second;
  if ((mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) != 0) {
    spdlog::warn("dir: '{}' was removed or moved; watching stops until it is back", dir);
    if ((mask & IN_IGNORED) == 0) {
      ::inotify_rm_watch(m_inotify, wd);
    }
    m_dirs.erase(wd);
    return;
  }
  if (name.empty()) {
    return;
  }
  const std::string path = dir + "/" + std::string(name);
  auto found = m_files.find(path);
  if (found == m_files.end()) {
    if ((mask & IN_DELETE) != 0) {
      m_finished.erase(path);
      return;
    }
    open_file(dir, std::string(name));
    found = m_files.find(path);
    if (found == m_files.end()) {
      return;  // not a trace file, or already finished
    }
  } else if ((mask & (IN_MODIFY | IN_CREATE | IN_MOVED_TO)) != 0) {
    if (read_file(*found->second, false)) {
      forget(found);
      return;
    }
  }
  if ((mask & (IN_CLOSE_WRITE | IN_DELETE)) != 0 && m_files.count(path) > 0) {
    finish_file(path, (mask & IN_CLOSE_WRITE) != 0);
  }
}

void DirWatcher::open_file(const std::string& dir, const std::string& name) {
  if (name.empty() || name.front() == '.') {
    return;
  }
  const std::string path = dir + "/" + name;
  // O_NOFOLLOW: a symbolic link is never followed out of the directory.
  // O_NONBLOCK: opening a FIFO must not hang the daemon.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    if (errno != ENOENT) {
      spdlog::debug("dir: skipping '{}': {}", path, std::strerror(errno));
    }
    return;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return;
  }
  auto file = std::make_unique<TracedFile>(m_options.framing);
  file->dir = dir;
  file->name = name;
  file->path = path;
  file->key = file_key(st.st_ino, path);
  file->fd = std::move(fd);
  file->owner_uid = st.st_uid;
  file->channel = m_sink.next_channel_id();
  file->sentinel = name == k_discard_sentinel;
  if (const auto done = m_finished.find(path); done != m_finished.end() && done->second == file->key) {
    return;  // finished in this run; removed once committed, if at all
  }
  if (const auto saved = m_committed.find(file->key); saved != m_committed.end()) {
    if (saved->second.second) {
      // Finished and committed in an earlier run, its removal cut short.
      if (m_options.delete_finished || file->sentinel) {
        ::unlink(path.c_str());
      }
      return;
    }
    file->read_offset = saved->second.first;
  }
  if (file->sentinel) {
    m_sentinels.fetch_add(1);
    spdlog::warn("dir: git found '{}' full (trace2.maxFiles) and wrote {}; ingesting and removing it", dir,
                 k_discard_sentinel);
  }
  m_sink.counters().channels_opened.fetch_add(1, std::memory_order_relaxed);
  m_sink.counters().channels_open.fetch_add(1, std::memory_order_relaxed);
  const auto [it, inserted] = m_files.emplace(path, std::move(file));
  m_open_files.store(m_files.size());
  if (read_file(*it->second, false)) {
    forget(it);
  }
}

bool DirWatcher::read_file(TracedFile& file, bool finish) {
  if (m_sink.over_budget() && !m_stopping && !finish) {
    catch_up_soon();  // the file keeps meanwhile
    return false;
  }
  auto& buffer = read_buffer();
  pipeline::IngestChunk chunk;
  while (true) {
    const ssize_t n = ::pread(file.fd.get(), buffer.data(), buffer.size(), static_cast<off_t>(file.read_offset));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      if (n < 0) {
        spdlog::warn("dir: reading '{}': {}", file.path, std::strerror(errno));
      }
      break;
    }
    file.read_offset += static_cast<std::uint64_t>(n);
    file.last_growth = std::chrono::steady_clock::now();
    m_sink.counters().bytes.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
    file.framer.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)),
                     [&](std::string_view line, std::uint64_t full_size) {
                       chunk.add_line(line, full_size);
                       if (!file.saw_atexit && line.find("\"event\":\"atexit\"") != std::string_view::npos) {
                         file.saw_atexit = true;
                       }
                     });
    if (chunk.bytes.size() >= k_chunk_bytes) {
      submit(file, std::move(chunk), false, false);
      chunk = pipeline::IngestChunk();
    }
  }
  // The last lines and "finished" travel in one chunk, so they commit
  // together: a restart never finds the last line read but the file open.
  const bool finished = finish || file.saw_atexit;
  if (finished) {
    file.framer.finish([&](std::string_view line, std::uint64_t full_size) { chunk.add_line(line, full_size); });
    submit(file, std::move(chunk), true, m_options.delete_finished || file.sentinel);
  } else if (!chunk.lines.empty()) {
    submit(file, std::move(chunk), false, false);
  }
  return finished;
}

void DirWatcher::finish_file(const std::string& path, bool closed_by_writer) {
  const auto found = m_files.find(path);
  if (found == m_files.end()) {
    return;
  }
  TracedFile& file = *found->second;
  spdlog::debug("dir: finished '{}' ({})", path, closed_by_writer ? "closed" : "atexit or idle");
  read_file(file, true);
  forget(found);
}

void DirWatcher::forget(std::map<std::string, std::unique_ptr<TracedFile>>::iterator found) {
  m_finished[found->first] = found->second->key;
  m_files.erase(found);
  m_open_files.store(m_files.size());
  m_sink.counters().channels_open.fetch_sub(1, std::memory_order_relaxed);
}

void DirWatcher::submit(TracedFile& file, pipeline::IngestChunk&& chunk, bool finished, bool remove) {
  chunk.origins.assign(1, Origin{SourceKind::dir, file.channel, std::nullopt, file.owner_uid});
  chunk.progress = pipeline::IngestChunk::FileProgress{
      file.key, file.path, finished ? file.read_offset : file.read_offset - file.framer.partial_size(),
      finished, remove, false};
  chunk.end_of_channel = finished;
  chunk.received_us = proto::unix_now_us();
  m_sink.counters().lines.fetch_add(chunk.lines.size(), std::memory_order_relaxed);
  chunk.seal(proto::Parser::padding_bytes());
  m_sink.submit(std::move(chunk));
}

void DirWatcher::catch_up_soon() {
  if (m_catch_up_armed || m_stopping) {
    return;
  }
  m_catch_up_armed = true;
  m_catch_up_timer.expires_after(std::chrono::milliseconds(10));
  m_catch_up_timer.async_wait([this](const boost::system::error_code& ec) {
    m_catch_up_armed = false;
    if (!ec && !m_stopping) {
      catch_up();
    }
  });
}

void DirWatcher::catch_up() {
  std::vector<std::string> done;
  for (auto& [path, file] : m_files) {
    if (m_sink.over_budget()) {
      catch_up_soon();
      break;
    }
    if (read_file(*file, false)) {
      done.push_back(path);
    }
  }
  for (const std::string& path : done) {
    forget(m_files.find(path));
  }
}

asio::awaitable<void> DirWatcher::tick() {
  while (!m_stopping) {
    m_timer.expires_after(std::chrono::seconds(1));
    boost::system::error_code ec;
    co_await m_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (m_stopping) {
      break;
    }
    // Directories that were missing or removed: try again.
    for (const std::string& dir : m_options.dirs) {
      const bool watched = std::any_of(m_dirs.begin(), m_dirs.end(), [&](const auto& d) { return d.second == dir; });
      if (!watched && std::filesystem::is_directory(dir)) {
        spdlog::info("dir: watching '{}' again", dir);
        watch(dir);
      }
    }
    // Silent files: finished once their writer is gone (or after the idle
    // timeout when the name does not say who writes it).
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::string> done;
    std::vector<std::string> idle;
    for (auto& [path, file] : m_files) {
      if (read_file(*file, false)) {  // catches up after a pause at the memory bound
        done.push_back(path);
        continue;
      }
      if (now - file->last_growth < m_options.idle_timeout) {
        continue;
      }
      const auto pid = writer_pid(file->name);
      if (!pid || !process_alive(*pid)) {
        idle.push_back(path);
      }
    }
    for (const std::string& path : done) {
      forget(m_files.find(path));
    }
    for (const std::string& path : idle) {
      finish_file(path, false);
    }
  }
}

}  // namespace trace2d::source
