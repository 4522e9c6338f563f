#pragma once
// The Prometheus exposition formats, written by hand (no client library in
// Debian fits a daemon that counts on its own threads): OpenMetrics 1.0.0,
// which Prometheus asks for, and the older text format 0.0.4, which is what
// a plain `curl` gets and what `promtool check metrics` reads. The two
// differ only in where a counter's `_total` goes, HELP's escaping and the
// final `# EOF`, so one writer serves both.

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trace2d::metrics {

enum class Format : std::uint8_t { openmetrics, text };

// What to answer a request with this Accept header: OpenMetrics when the
// client names it (Prometheus does), else the text format.
[[nodiscard]] Format format_for_accept(std::string_view accept);
[[nodiscard]] std::string_view content_type(Format format);

enum class Type : std::uint8_t { counter, gauge, histogram };

using Label = std::pair<std::string_view, std::string_view>;
using Labels = std::span<const Label>;

// Cumulative-ready buckets: counts per upper bound (not cumulative), the
// sum and the count. Bounds are shared by all histograms of a family.
struct Histogram {
  std::vector<std::uint64_t> buckets;  // one per bound, plus the last for +Inf
  double sum = 0;
  std::uint64_t count = 0;

  explicit Histogram(std::size_t bounds = 0) : buckets(bounds + 1, 0) {}
  // O(log bounds).
  void observe(std::span<const double> bounds, double value);
};

// The default bounds of duration histograms, in seconds: from 5 ms (a
// `git rev-parse`) to 10 minutes (a large clone).
[[nodiscard]] std::span<const double> default_duration_bounds();

class Exposition {
 public:
  explicit Exposition(Format format) : m_format(format) {}

  // Starts a family. `name` is without `_total`; `help` is one line of
  // plain text. Every family is started once, its samples follow.
  void family(std::string_view name, Type type, std::string_view help);
  // A sample of the current counter or gauge family.
  void value(Labels labels, double value);
  void value(double v) { value(Labels{}, v); }
  void value(std::initializer_list<Label> labels, double v) { value(Labels(labels.begin(), labels.size()), v); }
  // The samples of one histogram of the current histogram family.
  void histogram(Labels labels, std::span<const double> bounds, const Histogram& histogram);

  // The document (ends with `# EOF` in OpenMetrics).
  [[nodiscard]] std::string finish() &&;

 private:
  void sample(std::string_view suffix, Labels labels, const Label* extra, std::string_view value);

  Format m_format;
  std::string m_out;
  std::string m_name;
  Type m_type = Type::gauge;
};

// A part of the daemon that writes its own families into a scrape (the
// export's forwarder, the duration histograms): /metrics asks each one it
// was given, so a figure is declared where it is counted. Called on an io
// thread: what it reads must be safe to read from there.
class FigureSource {
 public:
  virtual void write_figures(Exposition& out) const = 0;

 protected:
  ~FigureSource() = default;
};

// A label value as the formats quote it (backslash, double quote, newline).
[[nodiscard]] std::string escape_label_value(std::string_view value);
// A number as both formats write it: integers without a fraction, "+Inf".
[[nodiscard]] std::string format_number(double value);

}  // namespace trace2d::metrics
