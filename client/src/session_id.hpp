#pragma once
// SIDs exactly as git's trace2/tr2_sid.c makes them:
//   [<GIT_TRACE2_PARENT_SID> "/"] <YYYYMMDD>T<HHMMSS>.<usec>Z-H<8 hex>-P<pid %08x>
// where the 8 hex digits start sha1(hostname) ("Localhost" without "H" when
// gethostname fails).

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace trace2d::client::detail {

// SHA-1 (FIPS 180-4), only to name the host as git does. Not for security.
[[nodiscard]] std::array<std::uint8_t, 20> sha1(std::string_view data);
[[nodiscard]] std::string sha1_hex(std::string_view data);

// The "H<8 hex>" part for this host.
[[nodiscard]] std::string host_component();
[[nodiscard]] std::string host_component(std::string_view hostname);

// This process's own component, at `unix_us`.
[[nodiscard]] std::string sid_component(std::int64_t unix_us, pid_t pid, std::string_view host);

// The full SID: `parent_sid` (GIT_TRACE2_PARENT_SID, may be empty) + "/" + own.
[[nodiscard]] std::string make_sid(std::string_view parent_sid, std::string_view own_component);

}  // namespace trace2d::client::detail
