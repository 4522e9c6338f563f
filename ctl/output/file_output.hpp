#pragma once
// Writing a command's result to a file (`export -o`, `report --html`).

#include <string>
#include <string_view>

namespace trace2d::ctl {

// Replaces `path` with `text` in one step: written to a temporary file in
// the same directory, then renamed, so a reader (a browser reloading the
// report) never sees half a file. The temporary (`path.tmp-<pid>`) is
// created O_EXCL|O_NOFOLLOW: a file or symlink already under that name is an
// error, never written through. A `path` that is not a regular file (a
// device such as /dev/null or /dev/stdout, a FIFO) is written into
// directly: it is not a file to replace. Throws std::runtime_error naming
// `path`.
void write_text_file(const std::string& path, std::string_view text);

// The name to tell the user for `path`: for /dev/fd/3, the file the query
// service's client created and passed (TRACE2CTL_OUTPUT_NAME, which it sets
// for the child), else `path`.
[[nodiscard]] std::string output_display_name(const std::string& path);

}  // namespace trace2d::ctl
