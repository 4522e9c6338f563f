#include "ctl/query/query_client.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace trace2d::ctl {
namespace {

constexpr std::string_view k_magic = "trace2ctl-query 1";
constexpr std::string_view k_passed_fd = "/dev/fd/3";

class Fd {
 public:
  explicit Fd(int fd = -1) : m_fd(fd) {}
  ~Fd() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return m_fd; }

 private:
  int m_fd;
};

// The output file the command writes, opened here: a temporary beside it
// (O_EXCL|O_NOFOLLOW, as write_text_file() makes it) renamed into place
// when the command succeeds, or the device or FIFO itself.
class OutputFile {
 public:
  explicit OutputFile(std::string path) : m_path(std::move(path)) {
    struct stat st {};
    if (::stat(m_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) {
        fail(EISDIR);
      }
      m_fd = ::open(m_path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (m_fd < 0) {
        fail(errno);
      }
      return;
    }
    m_temp = m_path + ".tmp-" + std::to_string(::getpid());
    m_fd = ::open(m_temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (m_fd < 0) {
      const int error = errno;
      m_temp.clear();
      fail(error);
    }
  }
  ~OutputFile() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    if (!m_temp.empty()) {
      ::unlink(m_temp.c_str());
    }
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  [[nodiscard]] int fd() const { return m_fd; }

  void commit() {
    if (m_temp.empty()) {
      return;
    }
    if (::rename(m_temp.c_str(), m_path.c_str()) != 0) {
      fail(errno);
    }
    m_temp.clear();
  }

 private:
  [[noreturn]] void fail(int error) const {
    throw std::runtime_error("cannot write '" + m_path + "': " + std::strerror(error));
  }

  std::string m_path;
  std::string m_temp;
  int m_fd = -1;
};

// The value of an output option at args[i] (and so args[i + 1]), rewritten
// to the passed descriptor; the path it named, or "" when none.
std::string take_output_path(std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string& arg = args[i];
    for (const std::string_view name : {"-o", "--output", "--html"}) {
      if (arg == name && i + 1 < args.size()) {
        std::string path = args[i + 1];
        if (path == "-") {
          return {};
        }
        args[i + 1] = std::string(k_passed_fd);
        return path;
      }
      const std::string joined = std::string(name) + "=";
      if (arg.starts_with(joined) && arg.size() > joined.size()) {
        std::string path = arg.substr(joined.size());
        if (path == "-") {
          return {};
        }
        arg = joined + std::string(k_passed_fd);
        return path;
      }
      if (name == "-o" && arg.starts_with("-o") && !arg.starts_with("--") && arg.size() > 2) {
        std::string path = arg.substr(2);
        if (path == "-") {
          return {};
        }
        arg = "-o" + std::string(k_passed_fd);
        return path;
      }
    }
  }
  return {};
}

bool passed_variable(std::string_view name) {
  return name == "TZ" || name == "COLUMNS" || name == "LINES" || name == "LANG" || name == "LANGUAGE" ||
         name == "NO_COLOR" || name == "TERM" || name.starts_with("LC_");
}

std::string request_payload(const std::vector<std::string>& args, const std::string& db_path,
                            const std::string& output_name) {
  std::string fields;
  const auto add = [&](std::string_view field) {
    fields += field;
    fields += '\0';
  };
  add(k_magic);
  add("db=" + db_path);
  for (const std::string& arg : args) {
    add("arg=" + arg);
  }
  if (!output_name.empty()) {
    add("env=TRACE2CTL_OUTPUT_NAME=" + output_name);
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::size_t equals = entry.find('=');
    if (equals != std::string_view::npos && passed_variable(entry.substr(0, equals))) {
      add("env=" + std::string(entry));
    }
  }
  const auto length = static_cast<std::uint32_t>(fields.size());
  std::string message(sizeof length, '\0');
  std::memcpy(message.data(), &length, sizeof length);
  return message + fields;
}

void send_request(int socket, const std::string& message, const std::vector<int>& fds) {
  std::string_view rest = message;
  bool first = true;
  while (!rest.empty()) {
    iovec iov{const_cast<char*>(rest.data()), rest.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 4)> control{};
    if (first) {
      msg.msg_control = control.data();
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw std::runtime_error(std::string("cannot send the request: ") + std::strerror(errno));
    }
    first = false;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string read_reply(int socket) {
  std::string reply;
  std::array<char, 4096> buffer{};
  while (true) {
    const ssize_t n = ::read(socket, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return reply;
    }
    reply.append(buffer.data(), static_cast<std::size_t>(n));
    if (reply.size() > 65536) {
      return reply;
    }
  }
}

}  // namespace

bool database_forbidden(const std::string& db_path) {
  return ::access(db_path.c_str(), R_OK) != 0 && (errno == EACCES || errno == EPERM);
}

std::string query_service_socket() {
  const char* configured = std::getenv("TRACE2CTL_QUERY_SOCKET");
  return configured != nullptr && *configured != '\0' ? configured : "/run/trace2d/trace2ctl.sock";
}

std::string access_advice(const std::string& db_path, const std::string& problem) {
  return "cannot read database '" + db_path + "': " + problem +
         ".\n  To see your own sessions, trace2d's query service must run: start trace2d "
         "(`sudo systemctl enable --now trace2d.socket trace2d`), whose service answers on " +
         query_service_socket() +
         " (a trace2d started by hand answers on trace2ctl.sock beside its --socket: point "
         "TRACE2CTL_QUERY_SOCKET at it).\n  To see everyone's: join the group that may read the database "
         "(`sudo usermod -aG trace2d $USER`, then log in again), or run trace2ctl with sudo.";
}

int run_through_query_service(std::vector<std::string> args, const std::string& db_path) {
  const std::string socket_path = query_service_socket();
  const std::string output_path = take_output_path(args);
  std::optional<OutputFile> output;
  if (!output_path.empty()) {
    output.emplace(output_path);
  }
  const Fd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (socket.get() < 0) {
    throw std::runtime_error(std::string("cannot create a socket: ") + std::strerror(errno));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    throw std::runtime_error("query service socket path too long: " + socket_path);
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw std::runtime_error(access_advice(db_path, std::string("Permission denied, and the query service at ") +
                                                        socket_path + " does not answer (" +
                                                        std::strerror(errno) + ")"));
  }
  // A closed standard descriptor goes as /dev/null: SCM_RIGHTS needs open ones.
  const Fd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  std::vector<int> fds;
  for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    fds.push_back(::fcntl(fd, F_GETFD) >= 0 ? fd : null.get());
  }
  if (output) {
    fds.push_back(output->fd());
  }
  send_request(socket.get(), request_payload(args, db_path, output ? output_path : std::string()), fds);
  const std::string reply = read_reply(socket.get());
  if (reply.starts_with("exit ")) {
    const int code = std::atoi(reply.c_str() + 5);
    if (code == 0 && output) {
      output->commit();
    }
    return code;
  }
  std::string message = reply.starts_with("error ") ? reply.substr(6) : reply;
  while (!message.empty() && message.back() == '\n') {
    message.pop_back();
  }
  if (message.empty()) {
    message = "it closed the connection without an answer";
  }
  throw std::runtime_error("the query service (" + socket_path + ") did not run the command: " + message);
}

}  // namespace trace2d::ctl
