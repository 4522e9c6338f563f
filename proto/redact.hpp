#pragma once
// Passwords in URLs. git before 2.43.1 writes `https://user:secret@host/...`
// into argv, alias and def_param events as typed; trace2d removes the
// password before a line is parsed or stored, so it is in no table, no raw
// column and no log.

#include <string>
#include <string_view>

namespace trace2d::proto {

inline constexpr std::string_view k_redacted = "<redacted>";

// Copies `line` into `out` with the password of every `scheme://user:password@`
// inside a JSON string replaced by "<redacted>". Returns false (and leaves
// `out` untouched) when there was nothing to replace.
bool redact_url_credentials(std::string_view line, std::string& out);

}  // namespace trace2d::proto
