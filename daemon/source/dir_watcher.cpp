#include "daemon/source/dir_watcher.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "daemon/source/trace_file_reader.hpp"
#include "daemon/source/unique_fd.hpp"
#include "db/file_offsets.hpp"
#include "db/sqlite.hpp"
#include "proto/sid.hpp"

namespace trace2d::source {
namespace {

constexpr std::uint32_t k_dir_events = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE |
                                       IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK;
// Read from one file per wake-up: a few milliseconds of work, after which the
// io thread serves other files, datagrams, signals and the watchdog.
constexpr std::uint64_t k_slice_bytes = 4 * 1024 * 1024;
// Names remembered per owner while they wait for a slot (about 1 MiB); more
// are found by a rescan once the list has drained, at the next tick: a list
// of 4,096 made a burst of 10,000 files wait for it (bench/run's directory
// shape: 170,000 events/s instead of 265,000).
constexpr std::size_t k_max_waiting_per_uid = 16384;

std::string file_key(ino_t inode, const std::string& path) {
  return "dir:" + std::to_string(inode) + ":" + path;
}

// git names its files after the SID's last component, "...-P<pid in hex>",
// with ".1".."9" after it when the name was taken. nullopt for names of
// other producers.
std::optional<pid_t> writer_pid(std::string_view name) {
  if (name.size() > 2 && name[name.size() - 2] == '.' && name.back() >= '1' && name.back() <= '9') {
    name.remove_suffix(2);
  }
  const auto pid = proto::sid_pid(name);
  return pid ? std::optional<pid_t>(static_cast<pid_t>(*pid)) : std::nullopt;
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

// The owner of a running process, when /proc shows it (systemd's
// ProtectProc=invisible hides other users' processes).
std::optional<uid_t> process_owner(pid_t pid) {
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) {
    return std::nullopt;
  }
  return st.st_uid;
}

std::size_t quarter_of_fd_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return SIZE_MAX;
  }
  return std::max<std::size_t>(1, static_cast<std::size_t>(limit.rlim_cur / 4));
}

}  // namespace

struct DirWatcher::TracedFile {
  std::string dir;
  std::string name;
  TraceFileReader reader;
  std::chrono::steady_clock::time_point last_growth = std::chrono::steady_clock::now();
  bool sentinel = false;
  // Its writer closed it (or it was removed, or given up on): finished once
  // read to its end.
  bool closing = false;
  bool removed = false;  // the path is gone or someone else's now: never unlinked
  bool more_queued = false;
  bool silent_too_long = false;  // past max_silence: even a shared log is finished
  bool refused = false;          // never read on in this run, however it grows
  bool shared_logged = false;

  TracedFile(std::string dir_, std::string name_, TraceFileReader reader_)
      : dir(std::move(dir_)), name(std::move(name_)), reader(std::move(reader_)) {}

  [[nodiscard]] const std::string& path() const { return reader.identity().path; }
  [[nodiscard]] std::int64_t owner_uid() const { return reader.identity().owner_uid; }
};

DirWatcher::DirWatcher(asio::io_context& io, ingest::IngestSink& sink, std::string db_path,
                       Options options)
    : m_io(io),
      m_strand(asio::make_strand(io)),
      m_sink(sink),
      m_db_path(std::move(db_path)),
      m_options(std::move(options)),
      m_fd_limit_cap(quarter_of_fd_limit()),
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
    m_committed = db::read_file_offsets(m_db_path, "dir:");
  } catch (const db::SqliteError& e) {
    throw std::runtime_error(std::string("cannot read trace file positions: ") + e.what());
  }
  if (m_options.max_open_files > m_fd_limit_cap) {
    spdlog::info("dir: at most {} trace files open at once (a quarter of RLIMIT_NOFILE), not {}", m_fd_limit_cap,
                 m_options.max_open_files);
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
        ingest::IngestChunk chunk;
        chunk.origins.push_back(ingest::Origin{ingest::SourceKind::dir, m_sink.next_channel_id(), {}, {}});
        chunk.progress = ingest::IngestChunk::FileProgress{key, path, 0, true, false, true};
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
      if (over_budget()) {
        break;  // the rest resume at their committed positions next time
      }
      read_file(*file);  // its position is committed with what it read
    }
    m_files.clear();
    m_open_per_uid.clear();
    m_waiting.clear();
    m_waiting_paths.clear();
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
    open_waiting_soon();  // the caps may have grown
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
      if (read_file(*found->second) == ReadOutcome::finished) {
        forget(found);
      }
    } else if (m_waiting_paths.count(path) == 0) {
      open_file(dir, name, false);
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
    // Drained to EAGAIN (the descriptor is edge-triggered). What each event
    // reads is bounded by the memory budget and a slice per file.
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
  const bool closed = (mask & IN_CLOSE_WRITE) != 0;
  const bool removed = (mask & IN_DELETE) != 0;
  auto found = m_files.find(path);
  if (found == m_files.end()) {
    if (const auto waiting = m_waiting_paths.find(path); waiting != m_waiting_paths.end()) {
      if (removed) {
        m_waiting_paths.erase(waiting);  // its place in the list is skipped
      } else {
        waiting->second = waiting->second || closed;
      }
      return;
    }
    if (removed) {
      m_finished.erase(path);
      return;
    }
    open_file(dir, std::string(name), closed);
    return;
  }
  TracedFile& file = *found->second;
  if (closed || removed) {
    file.closing = true;
    file.removed = file.removed || removed;
  }
  if (read_file(file) == ReadOutcome::finished) {
    forget(found);
  }
}

std::size_t DirWatcher::open_file_cap() const { return std::min(m_options.max_open_files, m_fd_limit_cap); }

// One owner never takes more than half of the files that may be open, so
// that the others always find room, however low the descriptor limit.
std::size_t DirWatcher::open_file_cap_per_uid() const {
  return std::max<std::size_t>(1, std::min(m_options.max_open_files_per_uid, open_file_cap() / 2));
}

void DirWatcher::open_file(const std::string& dir, const std::string& name, bool closed_by_writer) {
  if (name.empty() || name.front() == '.' || m_stopping) {
    return;
  }
  const std::string path = dir + "/" + name;
  // Who owns it decides whose slots it takes, before it takes a descriptor.
  struct stat before {};
  if (::lstat(path.c_str(), &before) != 0 || !S_ISREG(before.st_mode)) {
    return;
  }
  const auto uid = static_cast<std::int64_t>(before.st_uid);
  if (const auto done = m_finished.find(path); done != m_finished.end() &&
                                               done->second.key == file_key(before.st_ino, path) &&
                                               static_cast<std::uint64_t>(before.st_size) <= done->second.size) {
    return;  // finished in this run; removed once committed, if at all
  }
  const auto open = m_open_per_uid.find(uid);
  if ((open != m_open_per_uid.end() && open->second >= open_file_cap_per_uid()) ||
      m_files.size() >= open_file_cap()) {
    wait_for_slot(uid, dir, name, closed_by_writer);
    return;
  }
  UniqueFd fd = TraceFileReader::open_file(path);
  if (!fd) {
    if (errno == EMFILE || errno == ENFILE) {
      wait_for_slot(uid, dir, name, closed_by_writer);  // tried again when a file closes
    } else if (errno != ENOENT) {
      spdlog::debug("dir: skipping '{}': {}", path, std::strerror(errno));
    }
    return;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return;
  }
  const std::string key = file_key(st.st_ino, path);
  std::optional<std::uint64_t> grown_from;  // finished before, appended to since: read on from there
  if (const auto done = m_finished.find(path); done != m_finished.end() && done->second.key == key) {
    if (static_cast<std::uint64_t>(st.st_size) <= done->second.size) {
      return;
    }
    grown_from = done->second.size;
    m_finished.erase(done);
  }
  auto file = std::make_unique<TracedFile>(
      dir, name,
      TraceFileReader(std::move(fd),
                      {path, key, ingest::SourceKind::dir, m_sink.next_channel_id(), static_cast<std::int64_t>(st.st_uid)},
                      m_options.framing));
  file->sentinel = name == k_discard_sentinel;
  file->closing = closed_by_writer;
  if (grown_from) {
    file->reader.resume_at(*grown_from);
    file->reader.appended_after_its_end();
  } else if (const auto saved = m_committed.find(key); saved != m_committed.end()) {
    const bool grown = static_cast<std::uint64_t>(st.st_size) > saved->second.offset;
    if (saved->second.finished && !grown) {
      // Finished and committed in an earlier run, its removal cut short.
      if (m_options.delete_finished || file->sentinel) {
        ::unlink(path.c_str());
      }
      return;
    }
    file->reader.resume_at(saved->second.offset);
    if (saved->second.finished) {
      file->reader.appended_after_its_end();
    }
  }
  if (file->sentinel) {
    m_sentinels.fetch_add(1);
    spdlog::warn("dir: git found '{}' full (trace2.maxFiles) and wrote {}; ingesting and removing it", dir,
                 k_discard_sentinel);
  }
  m_sink.counters().channels_opened.fetch_add(1, std::memory_order_relaxed);
  m_sink.counters().channels_open.fetch_add(1, std::memory_order_relaxed);
  ++m_open_per_uid[file->owner_uid()];
  const auto [it, inserted] = m_files.emplace(path, std::move(file));
  m_open_files.store(m_files.size());
  TracedFile& opened = *it->second;
  // A hard link may be another user's file, linked here by whoever can
  // write the directory: its owner is not who sent it.
  if (st.st_nlink > 1) {
    refuse(opened, fmt::format("trace file '{}' refused: it has {} hard links (a hard link may be another "
                               "user's file; its owner is not necessarily who put it here)",
                               path, st.st_nlink),
           std::nullopt);
    forget(it);
    return;
  }
  // A file every user may write (git made it under umask 000) may hold
  // anyone's lines after its git's: stored, they would be its owner's.
  if ((st.st_mode & S_IWOTH) != 0) {
    refuse(opened,
           fmt::format("trace file '{}' refused: every user may write it (mode {:04o}), so its lines are not "
                       "necessarily its owner's",
                       path, st.st_mode & 07777),
           static_cast<std::int64_t>(st.st_uid));  // the owner may see why their git's trace was not stored
    forget(it);
    return;
  }
  if (read_file(opened) == ReadOutcome::finished) {
    forget(it);
  }
}

void DirWatcher::wait_for_slot(std::int64_t uid, const std::string& dir, const std::string& name,
                               bool closed_by_writer) {
  const std::string path = dir + "/" + name;
  if (const auto known = m_waiting_paths.find(path); known != m_waiting_paths.end()) {
    known->second = known->second || closed_by_writer;
    return;
  }
  std::deque<Waiting>& queue = m_waiting[uid];
  if (queue.size() >= k_max_waiting_per_uid) {
    m_rescan = true;  // this owner's list is full: found again by a rescan
    return;
  }
  queue.push_back(Waiting{dir, name});
  m_waiting_paths.emplace(path, closed_by_writer);
}

// Runs `work` on the strand once, after what is queued there (signals,
// timers, datagrams), however often it is asked for meanwhile.
void DirWatcher::post_once(bool& posted, void (DirWatcher::*work)()) {
  if (posted || m_stopping) {
    return;
  }
  posted = true;
  asio::post(m_strand, [this, &posted, work] {
    posted = false;
    if (!m_stopping) {
      (this->*work)();
    }
  });
}

void DirWatcher::open_waiting_soon() { post_once(m_open_waiting_posted, &DirWatcher::open_waiting); }

void DirWatcher::open_waiting() {
  // Round-robin over owners, so that a freed slot of the overall cap goes to
  // each in turn rather than to whoever queued most.
  // Each waiting name is tried at most once per call: one that cannot be
  // opened (EMFILE) queues again for the next.
  std::size_t attempts = m_waiting_paths.size();
  bool opened = true;
  while (opened && attempts > 0 && m_files.size() < open_file_cap()) {
    opened = false;
    for (auto it = m_waiting.begin(); it != m_waiting.end() && m_files.size() < open_file_cap();) {
      std::deque<Waiting>& queue = it->second;
      const auto open = m_open_per_uid.find(it->first);
      if (!queue.empty() && (open == m_open_per_uid.end() || open->second < open_file_cap_per_uid())) {
        const Waiting next = std::move(queue.front());
        queue.pop_front();
        --attempts;
        const auto known = m_waiting_paths.find(next.dir + "/" + next.name);
        if (known != m_waiting_paths.end()) {
          const bool closed = known->second;
          m_waiting_paths.erase(known);
          open_file(next.dir, next.name, closed);
        }
        opened = true;
      }
      it = queue.empty() ? m_waiting.erase(it) : std::next(it);
      if (attempts == 0) {
        break;
      }
    }
  }
}

DirWatcher::ReadOutcome DirWatcher::read_file(TracedFile& file) {
  if (const auto problem = file.reader.unfit(m_options.max_file_bytes)) {
    refuse(file, fmt::format("trace file '{}' refused: {}", file.path(), *problem), file.owner_uid());
    return ReadOutcome::finished;
  }
  const auto pause = [this, uid = file.owner_uid()] {
    if (over_budget(uid)) {
      catch_up_soon();  // the file keeps meanwhile
      return true;
    }
    return false;
  };
  // A shared log ends only when it is gone or silent past max_silence.
  const bool log_ends = file.reader.shared() && (file.removed || file.silent_too_long);
  const auto finish_at = log_ends       ? TraceFileReader::FinishAt::end
                         : file.closing ? TraceFileReader::FinishAt::atexit_or_end
                                        : TraceFileReader::FinishAt::atexit;
  const TraceFileReader::ReadResult result = file.reader.read(m_sink, k_slice_bytes, finish_at, removal(file), pause);
  if (result.bytes > 0) {
    file.last_growth = std::chrono::steady_clock::now();
  }
  if (file.reader.shared() && !file.shared_logged) {
    file.shared_logged = true;
    spdlog::warn(
        "dir: '{}' holds the events of more than one git process (GIT_TRACE2_EVENT names a file, "
        "not the directory): read as a log they all append to, kept, never removed",
        file.path());
  }
  if (result.finished) {
    return ReadOutcome::finished;
  }
  if (result.stop == TraceFileReader::Stop::slice_full && !m_stopping) {
    read_more_soon(file.path());  // the rest after the io thread's other work
  }
  return ReadOutcome::more_later;
}

bool DirWatcher::remove_when_finished(const TracedFile& file) const {
  return (m_options.delete_finished || file.sentinel) && !file.removed;
}

TraceFileReader::Removal DirWatcher::removal(const TracedFile& file) const {
  if (!remove_when_finished(file)) {
    return TraceFileReader::Removal::keep;
  }
  return file.sentinel ? TraceFileReader::Removal::always : TraceFileReader::Removal::own_file;
}

void DirWatcher::refuse(TracedFile& file, const std::string& reason, std::optional<std::int64_t> peer_uid) {
  spdlog::debug("dir: {}", reason);  // the reject row says it; a log line per file would be a flood
  file.refused = true;
  file.reader.refuse(m_sink, reason, peer_uid, remove_when_finished(file));
}

void DirWatcher::forget(FileMap::iterator found) {
  // A refused file is not read on when it grows: a hard link to a file
  // someone else writes would otherwise cost a reject row per write.
  const TracedFile& file = *found->second;
  m_finished[found->first] =
      Finished{file.reader.identity().key, file.refused ? UINT64_MAX : file.reader.read_offset()};
  const std::int64_t uid = found->second->owner_uid();
  if (auto open = m_open_per_uid.find(uid); open != m_open_per_uid.end() && --open->second == 0) {
    m_open_per_uid.erase(open);
  }
  m_files.erase(found);
  m_open_files.store(m_files.size());
  m_sink.counters().channels_open.fetch_sub(1, std::memory_order_relaxed);
  if (!m_waiting.empty()) {
    open_waiting_soon();
  }
}

void DirWatcher::read_more_soon(const std::string& path) {
  const auto found = m_files.find(path);
  if (found == m_files.end() || found->second->more_queued) {
    return;
  }
  found->second->more_queued = true;
  m_more.push_back(path);
  post_once(m_read_more_posted, &DirWatcher::read_more);  // not looped: others run in between
}

void DirWatcher::read_more() {
  std::vector<std::string> paths;
  paths.swap(m_more);
  for (const std::string& path : paths) {
    const auto found = m_files.find(path);
    if (found == m_files.end()) {
      continue;
    }
    found->second->more_queued = false;
    if (read_file(*found->second) == ReadOutcome::finished) {
      forget(found);
    }
  }
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
    if (m_sink.over_budget_share(1.0)) {
      catch_up_soon();
      break;
    }
    if (read_file(*file) == ReadOutcome::finished) {
      done.push_back(path);
    }
  }
  for (const std::string& path : done) {
    forget(m_files.find(path));
  }
}

bool DirWatcher::over_budget() const {
  // git never waits for a trace file, but a socket's writer does: files
  // stop at half the bound, so that one user's big file never fills the
  // queue the sockets need.
  return m_sink.over_budget_share(0.5);
}

// A file's owner past its share of the bound waits; another uid's file is
// read on up to the whole bound, so that one user's flood of files never
// holds back everyone else's.
bool DirWatcher::over_budget(std::int64_t uid) const {
  return m_sink.over_budget_share(1.0) || (over_budget() && m_sink.over_share(uid));
}

bool DirWatcher::writer_running(const TracedFile& file) const {
  const auto pid = writer_pid(file.name);
  if (!pid || !process_alive(*pid)) {
    return false;
  }
  // pid 1 always runs: a name is believed only when that process belongs
  // to the file's owner. Where /proc hides it, only max_silence bounds it.
  const auto owner = process_owner(*pid);
  return !owner || static_cast<std::int64_t>(*owner) == file.owner_uid();
}

asio::awaitable<void> DirWatcher::tick() {
  while (!m_stopping) {
    // Often enough for short idle timeouts; once a second at most.
    const auto period = std::clamp<std::chrono::milliseconds>(m_options.idle_timeout / 2,
                                                              std::chrono::milliseconds(50), std::chrono::seconds(1));
    m_timer.expires_after(period);
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
    // timeout when the name does not say who writes it, or says it falsely),
    // and after max_silence whatever the name says.
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::string> done;
    for (auto& [path, file] : m_files) {
      const auto silent = now - file->last_growth;
      file->silent_too_long = silent >= m_options.max_silence;
      if (!file->closing && silent >= m_options.idle_timeout &&
          (silent >= m_options.max_silence || !writer_running(*file))) {
        spdlog::debug("dir: finished '{}' (silent)", path);
        file->closing = true;
      }
      if (read_file(*file) == ReadOutcome::finished) {  // catches up after a pause at the memory bound
        done.push_back(path);
      }
    }
    for (const std::string& path : done) {
      forget(m_files.find(path));
    }
    // Slots freed without a file finishing (descriptors back after EMFILE).
    if (!m_waiting.empty()) {
      open_waiting();
    }
    // Names that did not fit a waiting list: found again once it drained.
    if (m_rescan && m_waiting_paths.size() < k_max_waiting_per_uid / 2) {
      m_rescan = false;
      for (const auto& [wd, dir] : std::map<int, std::string>(m_dirs.begin(), m_dirs.end())) {
        scan(dir);
      }
    }
  }
}

}  // namespace trace2d::source
