#pragma once
// Where the database lives when no path is given, shared by the daemon (which
// writes it) and trace2ctl (which reads it): the system service's database
// for root, the XDG state directory for everyone else.

#include <string>

namespace trace2d::db {

// /var/lib/trace2d/trace2d.db for root, $XDG_STATE_HOME/trace2d/trace2d.db
// (~/.local/state/...) for any other user.
[[nodiscard]] std::string default_db_path();
// The system service's database, whoever asks.
[[nodiscard]] std::string system_db_path();

}  // namespace trace2d::db
