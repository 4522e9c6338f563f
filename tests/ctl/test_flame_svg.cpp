// The flame chart's axis and legend, and the report's units: what a person
// reads off the page (issue 25, item 6).

#include <gtest/gtest.h>

#include <string>

#include "ctl/render/flame_svg.hpp"
#include "ctl/render/html_report.hpp"

namespace trace2d::test {
namespace {

using ctl::render::Bar;
using ctl::render::BarKind;
using ctl::render::FlameLayout;

Bar bar(BarKind kind, double start, double end, int row, const std::string& category = "") {
  Bar b;
  b.kind = kind;
  b.start = start;
  b.end = end;
  b.row = row;
  b.label = category.empty() ? "git" : category + "-label";
  b.tooltip = b.label;
  b.category = category;
  return b;
}

// A span of exactly 80 ms puts a tick at the chart's right edge: its label
// ends at the tick instead of running out of the chart ("80 m").
TEST(FlameSvg, TheLastAxisLabelEndsAtItsTickInsideTheChart) {
  FlameLayout layout;
  layout.bars = {bar(BarKind::process, 0, 0.080, 0), bar(BarKind::region, 0.01, 0.05, 1, "index")};
  layout.span = 0.080;
  layout.rows = 2;
  std::string svg;
  ctl::render::append_flame_svg(svg, layout);
  EXPECT_NE(svg.find(" text-anchor=\"end\">80 ms</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">0 ms</text>"), std::string::npos);
  EXPECT_EQ(svg.find(" text-anchor=\"end\">0 ms</text>"), std::string::npos);

  // Seconds once a step is a second or more.
  layout.bars.front().end = 12.0;
  layout.span = 12.0;
  svg.clear();
  ctl::render::append_flame_svg(svg, layout);
  EXPECT_NE(svg.find(">2 s</text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("2000 ms"), std::string::npos);
}

TEST(FlameSvg, TheLegendNamesEachKindAndCategoryWithItsColour) {
  FlameLayout layout;
  layout.bars = {bar(BarKind::process, 0, 1, 0), bar(BarKind::child, 0.1, 0.5, 1),
                 bar(BarKind::region, 0.1, 0.2, 2, "index"), bar(BarKind::region, 0.3, 0.4, 2, "index"),
                 bar(BarKind::region, 0.5, 0.6, 1, "<b>evil\xE2\x80\xAE")};
  std::string legend;
  ctl::render::append_flame_legend(legend, layout);
  EXPECT_NE(legend.find("<li class=\"process\"><i style=\"background:#4e79a7\"></i>git process</li>"),
            std::string::npos)
      << legend;
  EXPECT_NE(legend.find("<li class=\"child\"><i style=\"background:#f28e2b\"></i>"), std::string::npos);
  EXPECT_EQ(legend.find("class=\"thread\""), std::string::npos) << "no thread drawn, none named";
  EXPECT_NE(legend.find("<i style=\"background:" + std::string(ctl::render::region_colour("index")) +
                        "\"></i>region index</li>"),
            std::string::npos);
  EXPECT_EQ(legend.find("region index</li><li class=\"category\"><i style=\"background:" +
                        std::string(ctl::render::region_colour("index")) + "\"></i>region index"),
            std::string::npos)
      << "each category once";
  // Stored text, escaped and its bidi override shown, not obeyed.
  EXPECT_EQ(legend.find("<b>"), std::string::npos);
  EXPECT_NE(legend.find("region &lt;b&gt;evil\\u202e"), std::string::npos) << legend;

  // Bounded: one user's thousand categories cost a line.
  FlameLayout crowded;
  for (int i = 0; i < 1000; ++i) {
    crowded.bars.push_back(bar(BarKind::region, i, i + 1, 0, "c" + std::to_string(i)));
  }
  std::string bounded;
  ctl::render::append_flame_legend(bounded, crowded, 24);
  EXPECT_NE(bounded.find("and 976 more region categories"), std::string::npos);
  EXPECT_LT(bounded.size(), 3000u);
}

TEST(ReportUnits, DurationsReadInTheirUnit) {
  using ctl::render::human_duration;
  EXPECT_EQ(human_duration(std::nullopt), "");
  EXPECT_EQ(human_duration(0.00025), "0.25 ms");
  EXPECT_EQ(human_duration(0.0042), "4.2 ms");
  EXPECT_EQ(human_duration(0.3804), "380 ms");
  EXPECT_EQ(human_duration(2.414), "2.41 s");
  EXPECT_EQ(human_duration(95.2), "95.2 s");
  EXPECT_EQ(human_duration(250), "250 s");
  EXPECT_EQ(human_duration(720), "12 min");
  EXPECT_EQ(human_duration(4 * 3600), "4.0 h");
  EXPECT_EQ(human_duration(0.012, true), "+12 ms");
  EXPECT_EQ(human_duration(-0.012, true), "-12 ms");
  EXPECT_EQ(human_duration(-0.012), "-12 ms");
}

}  // namespace
}  // namespace trace2d::test
