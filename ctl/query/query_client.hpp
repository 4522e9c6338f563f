#pragma once
// Asking trace2d's query service (docs/security.md, "Per-user access") to
// run this trace2ctl command when the database may not be read directly:
// the service runs trace2ctl on its database restricted to the caller's uid
// (which the kernel tells it), with the caller's standard input, output and
// error. The wire format is in daemon/query/query_service.hpp.

#include <optional>
#include <string>
#include <vector>

namespace trace2d::ctl {

// Whether opening `db_path` fails for lack of permission (and not because
// it is missing): the case the query service is for.
[[nodiscard]] bool database_forbidden(const std::string& db_path);

// The service's socket: TRACE2CTL_QUERY_SOCKET, else the system service's
// (/run/trace2d/trace2ctl.sock).
[[nodiscard]] std::string query_service_socket();

// The advice for a user who may read neither the database nor ask the
// service, after `problem` (what failed).
[[nodiscard]] std::string access_advice(const std::string& db_path, const std::string& problem);

// Runs the command `args` (trace2ctl's arguments without --db) through the
// service for `db_path`, and returns its exit status. An output file named
// by -o, --output or --html is created here, with this user's rights, and
// passed to the service open; renamed into place when the command succeeds.
// Throws std::runtime_error (with access_advice) when the service cannot
// be reached, or refuses the request.
[[nodiscard]] int run_through_query_service(std::vector<std::string> args, const std::string& db_path);

}  // namespace trace2d::ctl
