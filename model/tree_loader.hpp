#pragma once
// Reads the sessions of one process tree from the database: the session
// `root` and every session whose SID starts with `root` + "/", or, when
// `root` is only a prefix (a GIT_TRACE2_PARENT_SID such as "ci-job 42"),
// every session under it. Each with its regions, children and threads
// (the `regions`, `children` and `threads` views), and optionally the data,
// counters and timers it reported.

#include <string>
#include <string_view>
#include <vector>

#include "model/process_tree.hpp"
#include "db/sqlite.hpp"

namespace trace2d::model {

struct LoadOptions {
  bool annotations = false;  // data, counters, timers (for the Chrome export)
  bool errors = false;       // error events (for the OTLP export)
  bool params = false;       // def_param events (the OTLP export's nickname)
};

// Run it inside a ReadTransaction, so that a live daemon's commits do not
// tear the tree. Empty when no session is `root` or under it.
[[nodiscard]] std::vector<ProcessRows> load_process_rows(db::Database& db, const std::string& root,
                                                         const LoadOptions& options = {});

// `root` as the commands take it: a trailing "/" ("ci-job 42/", as
// GIT_TRACE2_PARENT_SID often ends) is dropped.
[[nodiscard]] std::string normalise_root(std::string root);

// A JSON array of strings (argv as stored) as a list; other JSON values give
// one element holding the text as it is, so nothing is lost.
[[nodiscard]] std::vector<std::string> parse_string_array(std::string_view json);

}  // namespace trace2d::model
