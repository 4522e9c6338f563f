#pragma once
// Parses the time arguments of filters such as `sessions --since`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trace2d::ctl {

// Accepts
//   - an absolute UTC time as git writes it, "2026-11-21T10:00:00Z", with an
//     optional fraction ("…:00.5Z"), or a bare date "2026-11-21" (midnight UTC);
//   - a duration before `now_us`: digits and a unit, s m h d w ("10m", "3d").
// Returns microseconds since the epoch (clamped at 0), or nullopt when the
// text is neither.
[[nodiscard]] std::optional<std::int64_t> parse_since(std::string_view text, std::int64_t now_us);

// The canonical form stored in `sessions` ("YYYY-MM-DDTHH:MM:SS.ffffffZ"),
// so that SQL can compare times as text.
[[nodiscard]] std::string since_as_text(std::int64_t unix_us);

// CLI11 check message for an invalid value; empty when valid.
[[nodiscard]] std::string describe_since_error(const std::string& text);

}  // namespace trace2d::ctl
