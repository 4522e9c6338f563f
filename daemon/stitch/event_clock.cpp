#include "daemon/stitch/event_clock.hpp"

#include <cmath>

namespace trace2d::stitch {

std::optional<double> elapsed_between(const EventClock& from, const EventClock& to) {
  if (from.t_abs && to.t_abs && std::isfinite(*from.t_abs) && std::isfinite(*to.t_abs)) {
    const double seconds = *to.t_abs - *from.t_abs;
    return std::isfinite(seconds) && seconds >= 0 ? std::optional<double>(seconds) : std::nullopt;
  }
  if (from.time_us && to.time_us && *to.time_us >= *from.time_us) {
    return static_cast<double>(*to.time_us - *from.time_us) / 1e6;
  }
  return std::nullopt;
}

}  // namespace trace2d::stitch
