// The exposition formats, byte for byte: what Prometheus and promtool read.

#include "daemon/metrics/exposition.hpp"

#include <gtest/gtest.h>

#include <array>

namespace trace2d::metrics {
namespace {

TEST(Exposition, TextFormatNamesCountersByTheirSample) {
  Exposition out(Format::text);
  out.family("t_lines", Type::counter, "Lines.");
  out.value({{"source", "stream"}}, 3);
  out.family("t_queue_bytes", Type::gauge, "Bytes.");
  out.value(1.5);
  EXPECT_EQ(std::move(out).finish(),
            "# HELP t_lines_total Lines.\n# TYPE t_lines_total counter\nt_lines_total{source=\"stream\"} 3\n"
            "# HELP t_queue_bytes Bytes.\n# TYPE t_queue_bytes gauge\nt_queue_bytes 1.5\n");
}

TEST(Exposition, OpenMetricsNamesCounterFamiliesWithoutTotalAndEndsWithEof) {
  Exposition out(Format::openmetrics);
  out.family("t_lines", Type::counter, "Lines.");
  out.value(7);
  EXPECT_EQ(std::move(out).finish(), "# HELP t_lines Lines.\n# TYPE t_lines counter\nt_lines_total 7\n# EOF\n");
}

TEST(Exposition, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  const std::array<double, 2> bounds{0.5, 1};
  Histogram h(bounds.size());
  h.observe(bounds, 0.25);
  h.observe(bounds, 0.5);  // "le": the bound itself belongs to its bucket
  h.observe(bounds, 0.75);
  h.observe(bounds, 4);
  Exposition out(Format::text);
  out.family("t_seconds", Type::histogram, "Durations.");
  const Label labels[] = {{"cmd", "status"}};
  out.histogram(labels, bounds, h);
  EXPECT_EQ(std::move(out).finish(),
            "# HELP t_seconds Durations.\n# TYPE t_seconds histogram\n"
            "t_seconds_bucket{cmd=\"status\",le=\"0.5\"} 2\n"
            "t_seconds_bucket{cmd=\"status\",le=\"1\"} 3\n"
            "t_seconds_bucket{cmd=\"status\",le=\"+Inf\"} 4\n"
            "t_seconds_sum{cmd=\"status\"} 5.5\n"
            "t_seconds_count{cmd=\"status\"} 4\n");
}

TEST(Exposition, LabelValuesAreEscaped) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  Exposition out(Format::text);
  out.family("t", Type::gauge, "T.");
  out.value({{"x", "say \"hi\""}}, 1);
  EXPECT_NE(std::move(out).finish().find("t{x=\"say \\\"hi\\\"\"} 1\n"), std::string::npos);
}

TEST(Exposition, NumbersAreShortAndExact) {
  EXPECT_EQ(format_number(0), "0");
  EXPECT_EQ(format_number(12345678901), "12345678901");
  EXPECT_EQ(format_number(0.005), "0.005");
  EXPECT_EQ(format_number(-2.5), "-2.5");
}

TEST(Exposition, OpenMetricsOnlyWhenAsked) {
  EXPECT_EQ(format_for_accept(""), Format::text);
  EXPECT_EQ(format_for_accept("*/*"), Format::text);
  EXPECT_EQ(format_for_accept("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                              "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            Format::openmetrics);
  EXPECT_EQ(content_type(Format::text), "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace
}  // namespace trace2d::metrics
