#pragma once
// Credentials in URLs. git before 2.43.1 writes `https://user:secret@host/...`
// into argv, alias, child and def_param events as typed, and a token often
// stands where the user name goes (`https://ghp_TOKEN@github.com/...`,
// `https://TOKEN:x-oauth-basic@...`). trace2d removes the userinfo before a
// line is parsed or stored, so it is in no table, no raw column and no log.
//
// What counts as userinfo: after every `://` in the line (anywhere in a JSON
// string, not only at its start: `-c remote.origin.url=https://...`,
// `url.https://tok@host/.insteadOf`), everything up to the LAST `@` before
// the authority ends. The authority ends at `/` (also written `\/` or
// `\u002f` in JSON) or at the end of the JSON string, not at `?`, `#` or a
// space: git takes a password with those as typed. An `@` may be written
// `\u0040`. Other JSON escapes and percent-encoding are part of the text.
// When in doubt it redacts more, never less: text between `://` and an `@`
// that was not meant as a password is replaced too.
//
// What is kept: the user name when it is one of the well-known names that
// hosting services use in place of a user (`git`, `oauth2`,
// `x-access-token`, ...), which are never secret; then only the password is
// replaced (`https://oauth2:<redacted>@gitlab.example/`). Any other userinfo
// is replaced whole (`https://<redacted>@github.com/`): a user name cannot be
// told from a token by its look.

#include <string>
#include <string_view>

namespace trace2d::proto {

inline constexpr std::string_view k_redacted = "<redacted>";

// Copies `line` into `out` with the userinfo of every URL redacted as
// above. Returns false (and leaves `out` untouched) when there was nothing
// to replace. Allocates nothing when `out` already has the capacity, and
// costs one substring search on a line without `://`.
bool redact_url_credentials(std::string_view line, std::string& out);

// True for the user names kept in front of a redacted password.
[[nodiscard]] bool is_well_known_url_user(std::string_view user);

}  // namespace trace2d::proto
