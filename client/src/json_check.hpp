#pragma once
// data_json takes JSON text from the program. A malformed value would make
// the whole line unparseable for the collector, so it is checked first
// (RFC 8259 syntax; bytes >= 0x80 inside strings are copied as git does).

#include <string>
#include <string_view>

namespace trace2d::client::detail {

// True when `text` is exactly one JSON value (surrounding whitespace allowed)
// nested at most `max_depth` deep.
[[nodiscard]] bool is_json_value(std::string_view text, int max_depth = 32);

// Appends a valid JSON `text` without whitespace between tokens, as git's
// json-writer prints it (a newline inside would split the event line).
void append_compact_json(std::string& out, std::string_view text);

}  // namespace trace2d::client::detail
