#include "daemon/query/query_service.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

namespace trace2d::query {
namespace {

using source::UniqueFd;
using Clock = std::chrono::steady_clock;

constexpr std::string_view k_magic = "trace2ctl-query 1";
constexpr std::size_t k_max_request_bytes = 256 * 1024;
constexpr std::size_t k_max_value_bytes = 1024;
constexpr std::size_t k_max_descriptors = 4;

// The variables that shape trace2ctl's output and nothing else: no PAGER,
// no PATH, no LD_*, nothing a program run for the user could be steered by.
bool passed_variable(std::string_view name) {
  // TRACE2CTL_OUTPUT_NAME: the name of the output file, for messages only.
  constexpr std::array<std::string_view, 8> k_names{"TZ",       "COLUMNS",  "LINES", "LANG",
                                                    "LANGUAGE", "NO_COLOR", "TERM",  "TRACE2CTL_OUTPUT_NAME"};
  for (const std::string_view n : k_names) {
    if (name == n) {
      return true;
    }
  }
  return name.starts_with("LC_") && name.size() <= 32 &&
         name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == std::string_view::npos;
}

// Options the service sets itself, and options that name files the child
// would open with the daemon's rights.
bool refused_option(std::string_view arg, std::string& reason) {
  for (const std::string_view name : {"--db", "--only-uid", "--timeout"}) {
    if (arg == name || (arg.starts_with(name) && arg.size() > name.size() && arg[name.size()] == '=')) {
      reason = "the query service sets " + std::string(name) + " itself";
      return true;
    }
  }
  return false;
}

// For `-o FILE`, `--output FILE`, `--html FILE` and their joined forms: the
// value, when `arg` is one; `takes_next` when it is in the next argument.
std::optional<std::string_view> output_value(std::string_view arg, bool& takes_next) {
  takes_next = false;
  for (const std::string_view name : {"-o", "--output", "--html"}) {
    if (arg == name) {
      takes_next = true;
      return std::string_view();
    }
    if (name == "-o" && arg.starts_with("-o") && !arg.starts_with("--")) {
      return arg.substr(2);
    }
    if (arg.starts_with(name) && arg.size() > name.size() && arg[name.size()] == '=') {
      return arg.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

std::string check_output(std::string_view value, bool have_file) {
  if (value == "-") {
    return {};
  }
  if (value == "/dev/fd/3" && have_file) {
    return {};
  }
  return "an output file must be created by trace2ctl itself and passed (as /dev/fd/3), not named to the service";
}

bool wait_readable(int fd, int wake, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      return false;
    }
    std::array<pollfd, 2> fds{{{fd, POLLIN, 0}, {wake, POLLIN, 0}}};
    const int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left, INT_MAX)));
    if (rc < 0 && errno == EINTR) {
      continue;
    }
    if (rc < 0 || (fds[1].revents & POLLIN) != 0) {
      return false;
    }
    if (rc > 0) {
      return true;
    }
  }
}

// Reads the length, the fields and the descriptors. Returns the reason
// when the request does not arrive whole in time.
std::string receive_request(int connection, int wake, Clock::time_point deadline, std::string& payload,
                            std::vector<UniqueFd>& descriptors) {
  std::string data;
  std::size_t wanted = 4;
  bool have_length = false;
  while (data.size() < wanted) {
    if (!wait_readable(connection, wake, deadline)) {
      return "the request did not arrive in time";
    }
    std::array<char, 16384> buffer{};
    const std::size_t room = std::min(buffer.size(), wanted - data.size());
    iovec iov{buffer.data(), room};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * k_max_descriptors)> control{};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    const ssize_t n = ::recvmsg(connection, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      continue;
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
          int fd = -1;
          std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
          descriptors.emplace_back(fd);
        }
      }
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0) {
      return "too many descriptors passed";
    }
    if (n <= 0) {
      return n == 0 ? "the client closed the connection before its request was whole"
                    : std::string("cannot read the request: ") + std::strerror(errno);
    }
    data.append(buffer.data(), static_cast<std::size_t>(n));
    if (!have_length && data.size() >= 4) {
      std::uint32_t length = 0;
      std::memcpy(&length, data.data(), sizeof length);
      if (length > k_max_request_bytes) {
        return "the request is too large";
      }
      wanted = 4 + length;
      have_length = true;
    }
  }
  payload = data.substr(4);
  return {};
}

void send_reply(int connection, const std::string& line) {
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::send(connection, rest.data(), rest.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;  // the client is gone or not reading: nothing more to tell it
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

// A descriptor numbered at or above `floor`: dup2 onto 0..3 must not meet
// a source already there (posix_spawn would leave it close-on-exec).
UniqueFd above(UniqueFd fd, int floor) {
  if (fd.get() >= floor) {
    return fd;
  }
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, floor);
  return moved >= 0 ? UniqueFd(moved) : std::move(fd);
}

class SpawnActions {
 public:
  SpawnActions() { ::posix_spawn_file_actions_init(&m_actions); }
  ~SpawnActions() { ::posix_spawn_file_actions_destroy(&m_actions); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  posix_spawn_file_actions_t* get() { return &m_actions; }

 private:
  posix_spawn_file_actions_t m_actions{};
};

class SpawnAttributes {
 public:
  SpawnAttributes() { ::posix_spawnattr_init(&m_attr); }
  ~SpawnAttributes() { ::posix_spawnattr_destroy(&m_attr); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  posix_spawnattr_t* get() { return &m_attr; }

 private:
  posix_spawnattr_t m_attr{};
};

// Starts the child; its pid, or -1 with errno.
pid_t spawn_child(const std::vector<std::string>& args, const std::vector<std::string>& env,
                  const std::vector<UniqueFd>& fds) {
  SpawnActions actions;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    ::posix_spawn_file_actions_adddup2(actions.get(), fds[i].get(), static_cast<int>(i));
  }
  // Nothing else of the daemon's: its sockets, database, lock files.
  ::posix_spawn_file_actions_addclosefrom_np(actions.get(), static_cast<int>(fds.size()));
  SpawnAttributes attr;
  sigset_t none;
  sigemptyset(&none);
  sigset_t all;
  sigfillset(&all);
  // The daemon ignores SIGPIPE and blocks signals on its threads: the child
  // starts with every signal at its default (`| head` ends it quietly), in
  // a process group of its own (killed as one).
  ::posix_spawnattr_setsigmask(attr.get(), &none);
  ::posix_spawnattr_setsigdefault(attr.get(), &all);
  ::posix_spawnattr_setpgroup(attr.get(), 0);
  ::posix_spawnattr_setflags(attr.get(), POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> argv;
  for (const std::string& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) {
    envp.push_back(const_cast<char*>(e.c_str()));
  }
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args.front().c_str(), actions.get(), attr.get(), argv.data(), envp.data());
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  return pid;
}

// A query's memory and CPU come second to the daemon's own: under the
// unit's MemoryMax the kernel's OOM killer takes a query before trace2d,
// and a query's heap is bounded (a report on a 150,000-child session wanted
// 319 MB). Set from here, not by the child, right after it starts.
constexpr rlim_t k_child_data_bytes = rlim_t{256} << 20;
constexpr int k_child_nice = 10;
// AddressSanitizer reserves terabytes of shadow memory as the child
// starts, which RLIMIT_DATA counts: a sanitized trace2ctl could not start.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool k_bound_child_data = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool k_bound_child_data = false;
#else
constexpr bool k_bound_child_data = true;
#endif
#else
constexpr bool k_bound_child_data = true;
#endif

void demote_child(pid_t pid) {
  const rlimit data{k_child_data_bytes, k_child_data_bytes};
  if (k_bound_child_data && ::prlimit(pid, RLIMIT_DATA, &data, nullptr) != 0) {
    spdlog::debug("query service: cannot bound the memory of query {}: {}", pid, std::strerror(errno));
  }
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(pid), k_child_nice);
  std::ofstream("/proc/" + std::to_string(pid) + "/oom_score_adj") << "1000\n";
}

void kill_child(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

// Waits for the child, killing it when the client goes away, the limit
// passes or the service stops. The reply line.
std::string wait_for_child(pid_t pid, int connection, int wake, Clock::time_point deadline) {
  const UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  std::string outcome;
  while (outcome.empty()) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFEXITED(status)) {
        return "exit " + std::to_string(WEXITSTATUS(status)) + "\n";
      }
      return "exit " + std::to_string(128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0)) + "\n";
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      outcome = "error the query ran longer than the query service allows; it was stopped\n";
      break;
    }
    std::array<pollfd, 3> fds{{{connection, POLLIN | POLLRDHUP, 0}, {wake, POLLIN, 0}, {pidfd.get(), POLLIN, 0}}};
    // Without pidfds (before Linux 5.3), the loop looks at the child every 50 ms.
    const int timeout = pidfd ? static_cast<int>(std::min<long long>(left, INT_MAX)) : 50;
    const int rc = ::poll(fds.data(), pidfd ? 3 : 2, timeout);
    if (rc < 0 && errno != EINTR) {
      outcome = std::string("error poll failed: ") + std::strerror(errno) + "\n";
    } else if (rc > 0 && fds[1].revents != 0) {
      outcome = "error trace2d is stopping\n";
    } else if (rc > 0 && fds[0].revents != 0) {
      // The client sends nothing after its request: anything readable is
      // its end of the connection (Ctrl-C, a closed pipe).
      outcome = "error the client went away\n";
    }
  }
  kill_child(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return outcome;
}

std::string canonical_or_same(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : canonical.string();
}

}  // namespace

std::string default_trace2ctl_path() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return {};
  }
  const std::filesystem::path dir = self.parent_path();
  for (const std::filesystem::path& candidate : {dir / "trace2ctl", dir.parent_path() / "bin" / "trace2ctl"}) {
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return {};
}

std::string parse_query_request(std::string_view payload, std::size_t descriptors, QueryRequest& request) {
  if (descriptors != 3 && descriptors != 4) {
    return "a request passes 3 descriptors (standard input, output, error), or 4 with an output file";
  }
  request.output_file = descriptors == 4;
  std::vector<std::string_view> fields;
  while (!payload.empty()) {
    const std::size_t end = payload.find('\0');
    if (end == std::string_view::npos) {
      return "malformed request (a field without its NUL)";
    }
    fields.push_back(payload.substr(0, end));
    payload.remove_prefix(end + 1);
  }
  if (fields.empty() || fields.front() != k_magic) {
    return "not a trace2ctl query request of a version this trace2d knows (upgrade both together)";
  }
  bool pending_output = false;
  bool output_named = false;
  for (std::size_t i = 1; i < fields.size(); ++i) {
    const std::string_view field = fields[i];
    if (field.starts_with("db=")) {
      request.db_path = std::string(field.substr(3));
    } else if (field.starts_with("env=")) {
      const std::string_view entry = field.substr(4);
      const std::size_t equals = entry.find('=');
      if (equals == std::string_view::npos || entry.size() > k_max_value_bytes) {
        return "malformed environment variable in the request";
      }
      if (passed_variable(entry.substr(0, equals))) {
        request.env.emplace_back(entry);
      }
    } else if (field.starts_with("arg=")) {
      const std::string_view arg = field.substr(4);
      std::string reason;
      if (pending_output) {
        if (std::string problem = check_output(arg, request.output_file); !problem.empty()) {
          return problem;
        }
        output_named = output_named || arg != "-";
        pending_output = false;
      } else if (refused_option(arg, reason)) {
        return reason + "; run trace2ctl without it";
      } else if (bool next = false; const auto value = output_value(arg, next)) {
        if (next) {
          pending_output = true;
        } else if (std::string problem = check_output(*value, request.output_file); !problem.empty()) {
          return problem;
        } else {
          output_named = output_named || *value != "-";
        }
      } else if (arg == "--no-pager") {
        continue;  // given anyway
      }
      request.args.emplace_back(arg);
    } else {
      return "malformed request (unknown field)";
    }
  }
  if (request.output_file && !output_named) {
    return "an output file was passed, but no -o, --output or --html names it";
  }
  return {};
}

std::vector<std::string> child_arguments(const QueryServiceOptions& options, uid_t uid, const QueryRequest& request) {
  std::vector<std::string> args{options.trace2ctl_path,
                                "--db",
                                options.db_path,
                                "--only-uid",
                                std::to_string(uid),
                                "--timeout",
                                std::to_string(options.query_timeout.count()),
                                // A pager run with the daemon's rights could be told to run a shell.
                                "--no-pager"};
  args.insert(args.end(), request.args.begin(), request.args.end());
  return args;
}

QueryService::QueryService(QueryServiceOptions options) : m_options(std::move(options)) {
  if (m_options.trace2ctl_path.empty()) {
    throw source::StartupError("query service: no trace2ctl beside trace2d; set query.trace2ctl or disable the "
                               "service (query.enabled = false)");
  }
  if (::access(m_options.trace2ctl_path.c_str(), X_OK) != 0) {
    throw source::StartupError("query service: cannot run '" + m_options.trace2ctl_path +
                               "': " + std::strerror(errno));
  }
  m_claim = std::make_unique<source::SocketFile>(m_options.socket_path);
  m_listener = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!m_listener) {
    throw source::StartupError(std::string("query service: cannot create a socket: ") + std::strerror(errno));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, m_options.socket_path.c_str(), m_options.socket_path.size() + 1);
  if (::bind(m_listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(m_listener.get(), 64) != 0) {
    throw source::StartupError("query service: cannot listen on '" + m_options.socket_path +
                               "': " + std::strerror(errno));
  }
  m_claim->bound(m_options.socket_mode);
  m_wake = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!m_wake) {
    throw source::StartupError(std::string("query service: cannot create an eventfd: ") + std::strerror(errno));
  }
}

QueryService::~QueryService() { stop(); }

void QueryService::start() {
  m_acceptor = std::thread([this] {
    pthread_setname_np(pthread_self(), "trace2d-query");
    accept_loop();
  });
  spdlog::info("query service: {} (trace2ctl for users who may not read the database: {})", m_options.socket_path,
               m_options.trace2ctl_path);
}

void QueryService::stop() {
  {
    const std::lock_guard lock(m_mutex);
    if (m_stopping) {
      return;
    }
    m_stopping = true;
  }
  const std::uint64_t one = 1;
  if (m_wake && ::write(m_wake.get(), &one, sizeof one) < 0) {
    spdlog::warn("query service: cannot wake its threads: {}", std::strerror(errno));
  }
  if (m_acceptor.joinable()) {
    m_acceptor.join();
  }
  std::unique_lock lock(m_mutex);
  m_idle.wait(lock, [this] { return m_running == 0; });
}

void QueryService::accept_loop() {
  while (true) {
    std::array<pollfd, 2> fds{{{m_listener.get(), POLLIN, 0}, {m_wake.get(), POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      spdlog::error("query service: poll failed: {}; no more queries", std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) {
      return;
    }
    UniqueFd connection(::accept4(m_listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection) {
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: the ingest path comes first; try again soon.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      continue;
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(connection.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      continue;
    }
    {
      const std::lock_guard lock(m_mutex);
      std::size_t& mine = m_running_per_uid[cred.uid];
      if (m_running >= m_options.max_total || mine >= m_options.max_per_uid) {
        send_reply(connection.get(), "error too many queries at once (" + std::to_string(m_options.max_per_uid) +
                                         " per user, " + std::to_string(m_options.max_total) +
                                         " in all); try again when one has finished\n");
        if (mine == 0) {
          m_running_per_uid.erase(cred.uid);
        }
        continue;
      }
      ++mine;
      ++m_running;
    }
    std::thread(&QueryService::serve, this, std::move(connection), cred.uid).detach();
  }
}

void QueryService::finished(uid_t uid) {
  const std::lock_guard lock(m_mutex);
  if (--m_running_per_uid[uid] == 0) {
    m_running_per_uid.erase(uid);
  }
  --m_running;
  m_idle.notify_all();
}

void QueryService::serve(UniqueFd connection, uid_t uid) {
  pthread_setname_np(pthread_self(), "trace2d-query");
  std::string payload;
  std::vector<UniqueFd> descriptors;
  std::string refusal = receive_request(connection.get(), m_wake.get(),
                                        Clock::now() + m_options.request_timeout, payload, descriptors);
  QueryRequest request;
  if (refusal.empty()) {
    refusal = parse_query_request(payload, descriptors.size(), request);
  }
  if (refusal.empty() && canonical_or_same(request.db_path) != canonical_or_same(m_options.db_path)) {
    refusal = "this query service answers for the database '" + m_options.db_path + "', not '" +
              request.db_path + "'";
  }
  if (!refusal.empty()) {
    spdlog::debug("query service: uid {} refused: {}", uid, refusal);
    send_reply(connection.get(), "error " + refusal + "\n");
    connection.reset();
    finished(uid);
    return;
  }
  for (UniqueFd& fd : descriptors) {
    fd = above(std::move(fd), static_cast<int>(k_max_descriptors));
  }
  std::vector<std::string> env = request.env;
  env.emplace_back("PATH=/usr/bin:/bin");
  const std::vector<std::string> args = child_arguments(m_options, uid, request);
  const pid_t pid = spawn_child(args, env, descriptors);
  descriptors.clear();  // the child has its copies; the client's must not outlive it here
  std::string reply;
  if (pid < 0) {
    reply = "error cannot run '" + m_options.trace2ctl_path + "': " + std::strerror(errno) + "\n";
  } else {
    demote_child(pid);
    reply = wait_for_child(pid, connection.get(), m_wake.get(), Clock::now() + m_options.wall_limit);
  }
  spdlog::debug("query service: uid {}: {}", uid, reply.substr(0, reply.size() - 1));
  send_reply(connection.get(), reply);
  connection.reset();  // before finished(): stop() may destroy this service as soon as it counts
  finished(uid);
}

}  // namespace trace2d::query
