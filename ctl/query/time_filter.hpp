#pragma once
// Parses the time arguments of filters such as `sessions --since/--until`,
// the way journalctl reads them: local time unless a zone is given.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trace2d::ctl {

// Accepts what journalctl's --since accepts (systemd.time(7)), and the
// ISO 8601 forms git writes:
//   - relative to `now_us`: "-SPAN" and "SPAN ago" before it, "+SPAN" and
//     "SPAN left" after it, SPAN being systemd's time span: numbers with
//     units (us ms s min m h d w M y and their long names), fractions
//     allowed, "1h30min", "1.5h", "90" (seconds);
//   - "@SECONDS[.fraction]" since the epoch;
//   - a date and time: "2026-11-21" (midnight), "26-11-21", "2026-11-21
//     17:00", "2026-11-21T17:00:05", with an optional fraction of a second
//     ("…:05.25"), in local time (the TZ environment variable's zone), or
//     in UTC with " UTC" (journalctl) or "Z" ("…T10:00:00Z", as git writes
//     times), or at an offset from UTC ("…17:00+01:00", "+0100", "+01");
//   - a time of day, "17:00" or "17:00:30": today;
//   - "now", "today", "yesterday", "tomorrow" (midnight; " UTC" allowed).
// A bare span ("1h") is refused, as journalctl refuses it: it reads as a
// time, not as a duration ago. Returns microseconds since the epoch
// (clamped at 0), or nullopt when the text is none of these.
[[nodiscard]] std::optional<std::int64_t> parse_time(std::string_view text, std::int64_t now_us);

// The canonical form stored in `sessions` ("YYYY-MM-DDTHH:MM:SS.ffffffZ"),
// so that SQL can compare times as text.
[[nodiscard]] std::string time_as_text(std::int64_t unix_us);

// CLI11 check message for an invalid value; empty when valid.
[[nodiscard]] std::string describe_time_error(const std::string& text);

// What --since and --until accept, for their --help.
inline constexpr const char* k_time_help =
    "as journalctl: a local time (2026-11-21 17:00, 2026-11-21, 17:00), a time in UTC or with a zone "
    "(2026-11-21 16:00 UTC, 2026-11-21T16:00:00Z, 2026-11-21 17:00+01:00), today, yesterday, now, a time "
    "relative to now (-1h, 1h ago, -10min, 3d ago, +5min), or @SECONDS since the epoch";

}  // namespace trace2d::ctl
