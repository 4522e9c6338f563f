#pragma once
// Parses the time arguments of filters such as `sessions --since/--until`,
// the way journalctl reads them: local time unless a zone is given.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trace2d::ctl {

// Accepts
//   - a date and time: "2026-11-21", "2026-11-21 17:00", "2026-11-21T17:00:05",
//     with an optional fraction of a second ("…:05.25"), in local time (the
//     TZ environment variable's zone), or in UTC with "Z" ("…T10:00:00Z", as
//     git writes times), or at an offset from UTC ("…17:00+01:00", "+0100",
//     "+01"); a bare date is that day's midnight;
//   - a time of day, "17:00" or "17:00:30": today, local time;
//   - "now", "today", "yesterday", "tomorrow" (local midnight but "now");
//   - a duration before `now_us`: a number, fractions allowed, and a unit,
//     s m h d w ("10m", "1.5h", "3d").
// Returns microseconds since the epoch (clamped at 0), or nullopt when the
// text is none of these.
[[nodiscard]] std::optional<std::int64_t> parse_time(std::string_view text, std::int64_t now_us);

// The canonical form stored in `sessions` ("YYYY-MM-DDTHH:MM:SS.ffffffZ"),
// so that SQL can compare times as text.
[[nodiscard]] std::string time_as_text(std::int64_t unix_us);

// CLI11 check message for an invalid value; empty when valid.
[[nodiscard]] std::string describe_time_error(const std::string& text);

// What --since and --until accept, for their --help.
inline constexpr const char* k_time_help =
    "a local time (2026-11-21 17:00, 2026-11-21, 17:00), a time with a zone (2026-11-21T16:00:00Z, "
    "2026-11-21 17:00+01:00), today, yesterday, now, or a duration ago (30s, 10m, 1.5h, 3d, 1w)";

}  // namespace trace2d::ctl
