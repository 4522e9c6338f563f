#pragma once
// The query service (docs/security.md, "Per-user access"): lets a user who
// may not read the database run trace2ctl on their own sessions.
//
// trace2d listens on a second AF_UNIX stream socket (`trace2ctl.sock`
// beside the stream socket, mode 0666). A trace2ctl that cannot open the
// database connects, sends its arguments and a few environment variables,
// and passes its standard input, output and error (and the output file it
// created itself, if any) with SCM_RIGHTS. The service takes the caller's
// uid from the kernel (SO_PEERCRED), runs `trace2ctl --only-uid UID` on the
// daemon's database with those descriptors as 0, 1, 2 (and 3), in a clean
// environment, waits for it and sends back its exit status. Everything runs
// on the service's own threads: the ingest path never waits for it.
//
// Wire format (client to service), one message:
//   u32 length (host order), then `length` bytes of NUL-terminated fields:
//   "trace2ctl-query 1", then "db=PATH" (the database the user asked for),
//   "arg=..." for each argument, "env=NAME=VALUE" for each variable;
//   with SCM_RIGHTS on it: 3 descriptors (stdin, stdout, stderr), or 4 (and
//   the output file, which the arguments name /dev/fd/3).
// Reply: one line, "exit N" (N: the child's exit code, 128 + signal when
// it was killed) or "error MESSAGE"; then the service closes.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/settings/setting.hpp"
#include "daemon/source/socket_file.hpp"
#include "daemon/source/unique_fd.hpp"

namespace trace2d::query {

struct QueryServiceOptions {
  std::string socket_path;
  unsigned socket_mode = 0666;  // any local user may ask about their own sessions
  std::string db_path;          // the daemon's database: the only one served
  std::string trace2ctl_path;   // the binary run for each query
  std::size_t max_per_uid = 2;  // queries one uid may have running at once
  std::size_t max_total = 8;    // and all uids together
  // --timeout given to every query, and the wall-clock limit after which
  // its process is killed (a `sessions --follow` ends there too).
  std::chrono::seconds query_timeout{30};
  std::chrono::seconds wall_limit{300};
  // How long a client may take to send its request.
  std::chrono::milliseconds request_timeout{5000};
};

// The trace2ctl beside this executable (or in ../bin beside an sbin), or
// "" when there is none.
[[nodiscard]] std::string default_trace2ctl_path();

// The [query] settings (docs/security.md, "Per-user access"): trace2ctl for
// users who may not read the database, on their own sessions. The socket ""
// is trace2ctl.sock beside the stream socket, trace2ctl "" the one beside
// trace2d (default_trace2ctl_path()): the daemon makes QueryServiceOptions
// from them once its sockets are known.
struct QuerySettings {
  bool enabled = true;
  std::string socket;
  std::string trace2ctl;

  // `Self` is QuerySettings or const QuerySettings.
  template <typename Self, typename Visitor>
  static void visit_settings(Self& o, Visitor& v) {
    using settings::Key;
    v.boolean(Key{"query", "enabled", "--query", "",
                  "Serve trace2ctl to users who may not read the database, each their own sessions"},
              o.enabled);
    v.text(Key{"query", "socket", "--query-socket", "PATH",
               "The query service's socket (\"\": trace2ctl.sock beside the stream socket)"},
           o.socket, source::socket_path_problem);
    v.text(Key{"query", "trace2ctl", "--query-trace2ctl", "PATH",
               "The trace2ctl the query service runs (\"\": the one beside trace2d)"},
           o.trace2ctl, settings::absolute_path_or_empty);
  }
};

// What a request asks for, once checked; the reason when it is refused.
struct QueryRequest {
  std::string db_path;
  std::vector<std::string> args;
  std::vector<std::string> env;  // NAME=VALUE, only the names passed on
  bool output_file = false;      // a 4th descriptor came, for /dev/fd/3
};

// Parses and checks the fields of a request (exposed for the tests): fills
// `request`, or returns why it is refused.
[[nodiscard]] std::string parse_query_request(std::string_view payload, std::size_t descriptors,
                                              QueryRequest& request);

// The command line a request runs (exposed for the tests).
[[nodiscard]] std::vector<std::string> child_arguments(const QueryServiceOptions& options, uid_t uid,
                                                       const QueryRequest& request);

class QueryService {
 public:
  // Claims and binds the socket (source::StartupError when it cannot).
  explicit QueryService(QueryServiceOptions options);
  // Stops: kills the queries still running and waits for their threads.
  ~QueryService();
  QueryService(const QueryService&) = delete;
  QueryService& operator=(const QueryService&) = delete;

  void start();
  void stop();
  [[nodiscard]] const std::string& path() const { return m_options.socket_path; }

 private:
  void accept_loop();
  void serve(source::UniqueFd connection, uid_t uid);
  void finished(uid_t uid);

  QueryServiceOptions m_options;
  std::unique_ptr<source::SocketFile> m_claim;
  source::UniqueFd m_listener;
  source::UniqueFd m_wake;  // an eventfd: readable once stop() was called
  std::thread m_acceptor;
  std::mutex m_mutex;
  std::condition_variable m_idle;
  std::map<uid_t, std::size_t> m_running_per_uid;
  std::size_t m_running = 0;
  bool m_stopping = false;
};

}  // namespace trace2d::query
