#include "ctl/commands/number_flags.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace trace2d::ctl {
namespace {

// %.15g drops the ".000000" that %f would print for whole bounds.
std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", value);
  return text;
}

bool parse_whole(const std::string& text, long long& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parse_real(const std::string& text, double& value) {
  // from_chars for double: locale-independent, and it rejects "1e" and "0x1".
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(value);
}

}  // namespace

CLI::Validator whole_number_at_least(long long min) {
  const std::string what = "a whole number of " + std::to_string(min) + " or more";
  return CLI::Validator(
      [min, what](const std::string& text) -> std::string {
        long long value = 0;
        if (!parse_whole(text, value) || value < min) {
          return "'" + text + "' is not " + what;
        }
        return {};
      },
      "N>=" + std::to_string(min), "whole number");
}

CLI::Validator number_between(double min, double max, const std::string& unit) {
  const std::string what = "a number of " + unit + " from " + number_text(min) + " to " + number_text(max);
  return CLI::Validator(
      [min, max, what](const std::string& text) -> std::string {
        double value = 0;
        if (!parse_real(text, value) || value < min || value > max) {
          return "'" + text + "' is not " + what;
        }
        return {};
      },
      number_text(min) + ".." + number_text(max), "number");
}

CLI::Validator non_negative_number() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        double value = 0;
        if (!parse_real(text, value) || value < 0) {
          return "'" + text + "' is not a number of 0 or more";
        }
        return {};
      },
      "X>=0", "non-negative number");
}

}  // namespace trace2d::ctl
