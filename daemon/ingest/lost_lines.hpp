#pragma once
// Lines read and not stored as events because of a bound, and which
// session they belonged to, found without parsing them.

#include <cstdint>
#include <string_view>

namespace trace2d::ingest {

// Why a session's lines were lost (docs/security.md, "Loss accounting").
enum class LossReason : std::uint8_t {
  rate_valve,    // limits.per_uid_lines_per_second, under pressure
  memory_bound,  // its uid's share of limits.queue_max_mib
  too_long,      // over limits.max_line_bytes
  cut_short,     // its uid held its bound of unfinished lines
};
inline constexpr std::size_t k_loss_reasons = 4;

[[nodiscard]] constexpr std::string_view to_string(LossReason reason) {
  switch (reason) {
    case LossReason::rate_valve: return "the rate valve";
    case LossReason::memory_bound: return "its uid's share of the memory bound";
    case LossReason::too_long: return "too long";
    case LossReason::cut_short: return "cut short";
  }
  return "unknown";
}

// The SID a line names in its head, or empty. Git writes `{"event":"…",
// "sid":"…"` first, so a bounded look at the head finds it at the cost of
// a short search, whatever the line's length. A SID with an escape in it is
// not taken (it would need parsing); such a line is its channel's.
[[nodiscard]] inline std::string_view sid_in_head(std::string_view line) {
  constexpr std::size_t k_head = 256;
  constexpr std::size_t k_max_sid = 1024;
  constexpr std::string_view key = R"("sid":")";
  const std::size_t at = line.substr(0, k_head).find(key);
  if (at == std::string_view::npos) {
    return {};
  }
  const std::string_view rest = line.substr(at + key.size(), k_max_sid + 1);
  const std::size_t end = rest.find_first_of("\"\\");
  if (end == std::string_view::npos || end == 0 || rest[end] != '"') {
    return {};
  }
  return rest.substr(0, end);
}

}  // namespace trace2d::ingest
