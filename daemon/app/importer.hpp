#pragma once
// `trace2d import FILE|DIR...`: loads saved trace files (a trace directory
// captured earlier, or any file of event lines) through the same pipeline as
// the daemon. Each file's position is committed with its events, keyed by a
// fingerprint of its first line, so importing again adds nothing and a file
// that grew since adds only the new lines.

#include <string>
#include <vector>

#include "daemon/app/options.hpp"

namespace trace2d::app {

// Returns the process exit code: 0 when every file was read (rejected lines
// are stored as rejects and do not fail the import), 1 otherwise.
int run_import(const DaemonOptions& options, const std::vector<std::string>& paths);

}  // namespace trace2d::app
