#include "daemon/metrics/exposition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>

namespace trace2d::metrics {
namespace {

constexpr std::array<double, 16> k_duration_bounds{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                   2.5,   5,    10,    30,   60,  120,  300, 600};

std::string_view type_name(Type type) {
  switch (type) {
    case Type::counter: return "counter";
    case Type::gauge: return "gauge";
    case Type::histogram: return "histogram";
  }
  return "unknown";
}

}  // namespace

Format format_for_accept(std::string_view accept) {
  return accept.find("application/openmetrics-text") != std::string_view::npos ? Format::openmetrics
                                                                                : Format::text;
}

std::string_view content_type(Format format) {
  return format == Format::openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                       : "text/plain; version=0.0.4; charset=utf-8";
}

void Histogram::observe(std::span<const double> bounds, double value) {
  // A bucket's bound is inclusive ("le"): the first bound >= value.
  const auto at = std::lower_bound(bounds.begin(), bounds.end(), value);
  ++buckets[static_cast<std::size_t>(at - bounds.begin())];
  sum += value;
  ++count;
}

std::span<const double> default_duration_bounds() { return k_duration_bounds; }

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_number(double value) {
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  if (std::isnan(value)) {
    return "NaN";
  }
  // Shortest text that reads back as the same double; whole numbers below
  // 2^53 without a fraction or an exponent.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    return fmt::format("{}", static_cast<std::int64_t>(value));
  }
  return fmt::format("{}", value);
}

void Exposition::family(std::string_view name, Type type, std::string_view help) {
  // Constant text written by trace2d: nothing to escape in either format.
  assert(help.find_first_of("\\\"\n") == std::string_view::npos);
  m_name = name;
  m_type = type;
  // The text format names a counter family by its sample (`x_total`),
  // OpenMetrics by the name without the suffix.
  const std::string family_name =
      type == Type::counter && m_format == Format::text ? m_name + "_total" : m_name;
  fmt::format_to(std::back_inserter(m_out), "# HELP {} {}\n# TYPE {} {}\n", family_name, help, family_name,
                 type_name(type));
}

void Exposition::sample(std::string_view suffix, Labels labels, const Label* extra, std::string_view value) {
  m_out += m_name;
  m_out += suffix;
  if (!labels.empty() || extra != nullptr) {
    m_out += '{';
    bool first = true;
    const auto put = [&](const Label& label) {
      if (!first) {
        m_out += ',';
      }
      first = false;
      fmt::format_to(std::back_inserter(m_out), "{}=\"{}\"", label.first, escape_label_value(label.second));
    };
    for (const Label& label : labels) {
      put(label);
    }
    if (extra != nullptr) {
      put(*extra);
    }
    m_out += '}';
  }
  m_out += ' ';
  m_out += value;
  m_out += '\n';
}

void Exposition::value(Labels labels, double v) {
  assert(m_type != Type::histogram);
  sample(m_type == Type::counter ? "_total" : "", labels, nullptr, format_number(v));
}

void Exposition::histogram(Labels labels, std::span<const double> bounds, const Histogram& h) {
  assert(m_type == Type::histogram && h.buckets.size() == bounds.size() + 1);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += h.buckets[i];
    const std::string le = i < bounds.size() ? format_number(bounds[i]) : std::string("+Inf");
    const Label extra{"le", le};
    sample("_bucket", labels, &extra, fmt::format("{}", cumulative));
  }
  sample("_sum", labels, nullptr, format_number(h.sum));
  sample("_count", labels, nullptr, fmt::format("{}", h.count));
}

std::string Exposition::finish() && {
  if (m_format == Format::openmetrics) {
    m_out += "# EOF\n";
  }
  return std::move(m_out);
}

}  // namespace trace2d::metrics
