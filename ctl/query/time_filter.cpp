#include "ctl/query/time_filter.hpp"

#include <charconv>
#include <limits>

#include "proto/timestamp.hpp"

namespace trace2d::ctl {
namespace {

std::optional<std::int64_t> unit_us(char unit) {
  constexpr std::int64_t k_second = 1'000'000;
  switch (unit) {
    case 's': return k_second;
    case 'm': return 60 * k_second;
    case 'h': return 3600 * k_second;
    case 'd': return 86400 * k_second;
    case 'w': return 7 * 86400 * k_second;
    default: return std::nullopt;
  }
}

std::optional<std::int64_t> parse_duration_us(std::string_view text) {
  if (text.size() < 2) {
    return std::nullopt;
  }
  const auto unit = unit_us(text.back());
  const std::string_view digits = text.substr(0, text.size() - 1);
  std::int64_t count = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
  if (!unit || ec != std::errc() || end != digits.data() + digits.size() || count < 0) {
    return std::nullopt;
  }
  // A duration reaching before the epoch means "everything"; saturate.
  if (count > std::numeric_limits<std::int64_t>::max() / *unit) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return count * *unit;
}

}  // namespace

std::optional<std::int64_t> parse_since(std::string_view text, std::int64_t now_us) {
  if (const auto duration = parse_duration_us(text)) {
    return *duration >= now_us ? 0 : now_us - *duration;
  }
  if (text.size() == 10) {
    return proto::parse_utc_timestamp(std::string(text) + "T00:00:00Z");
  }
  return proto::parse_utc_timestamp(text);
}

std::string since_as_text(std::int64_t unix_us) { return proto::format_utc_timestamp(unix_us); }

std::string describe_since_error(const std::string& text) {
  if (parse_since(text, proto::unix_now_us())) {
    return {};
  }
  return "'" + text +
         "' is neither a UTC time (2026-11-21T10:00:00Z, 2026-11-21) nor a duration "
         "(30s, 10m, 2h, 3d, 1w)";
}

}  // namespace trace2d::ctl
