#pragma once
// When an event happened, by the two clocks a producer may write: `t_abs`
// (seconds since its process started) and `time` (wall clock).
//
// git times a region or a child with the leave's or exit's `t_rel`. Other
// producers do not always write it (Git Credential Manager's region_leave
// has no t_rel, but both of its region events carry t_abs). Then the
// duration is the difference of the two events' clocks: t_abs when both
// have it (the producer's own monotonic-ish count, immune to wall-clock
// steps), else their times. docs/schema.md states the rule.

#include <cstdint>
#include <optional>

namespace trace2d::stitch {

struct EventClock {
  std::optional<double> t_abs;
  std::optional<std::int64_t> time_us;  // microseconds since the epoch
};

// Seconds from `from` to `to`, by t_abs when both have it, else by time;
// nullopt when neither pair is complete or the clock went backwards.
[[nodiscard]] std::optional<double> elapsed_between(const EventClock& from, const EventClock& to);

}  // namespace trace2d::stitch
