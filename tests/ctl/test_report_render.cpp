// The HTML report rendered by a real browser: headless Chromium (Debian's
// `chromium`, installed by .ci/deps) takes a screenshot and dumps the DOM
// of a report on the captured `git fetch`, and measures the layout of the
// whole report of the captured traces at 1280 pixels (tests/support/
// chromium.hpp). Skipped when Chromium is absent.
//
// TRACE2D_UPDATE_SCREENSHOT=1 also copies the screenshot to
// docs/report-fetch.png (the one the README shows).

#include <gtest/gtest.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ctl/render/flame_svg.hpp"
#include "ctl/render/html_report.hpp"
#include "tests/ctl/imported_traces.hpp"
#include "tests/ctl/png_image.hpp"
#include "tests/ctl/sample_database.hpp"
#include "tests/support/chromium.hpp"

namespace trace2d::test {
namespace {

namespace fs = std::filesystem;

constexpr int k_width = 1280;
constexpr int k_height = 1300;  // the fetch's flame chart is below the summaries
constexpr Rgb k_white{255, 255, 255};
constexpr Rgb k_process_blue{0x4e, 0x79, 0xa7};
constexpr Rgb k_child_orange{0xf2, 0x8e, 0x2b};
constexpr BrowserWindow k_window{k_width, k_height};

ProcessResult chromium(const std::string& binary, const TempDir& dir, const std::string& html,
                       const std::string& action) {
  return run_chromium(binary, dir, html, {action}, k_window);
}

class ReportRender : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto found = find_chromium();
    if (!found) {
      GTEST_SKIP() << "chromium is not installed (.ci/deps installs it): the HTML report is not rendered";
    }
    m_chromium = *found;
    const ProcessResult report = run_ctl({"--db", imported_traces_db(), "report", "--html", m_html, "--cmd", "fetch",
                                          "--limit", "1"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
  }

  TempDir m_dir;
  std::string m_html = m_dir.file("report.html");
  std::string m_chromium;
};

TEST_F(ReportRender, ScreenshotShowsTheFlameChart) {
  const std::string png = m_dir.file("report.png");
  const ProcessResult shot = chromium(m_chromium, m_dir, m_html, "--screenshot=" + png);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  const PngImage image = decode_png(read_file(png));
  EXPECT_EQ(image.width, k_width);
  EXPECT_EQ(image.height, k_height);
  // Not blank: text, tables and bars in many colours...
  EXPECT_GT(image.distinct_colours(), 50u);
  EXPECT_LT(image.count(k_white), image.pixels.size() * 95 / 100);
  // ...among them the five process bars (blue) and the three child
  // process spans (orange), each at least 1000 pixels' worth.
  EXPECT_GT(image.count(k_process_blue), 5000u);
  EXPECT_GT(image.count(k_child_orange), 3000u);

  // The decoder is right about a page that really is blank.
  const std::string blank_html = m_dir.file("blank.html");
  write_file(blank_html, "<!DOCTYPE html><html><body></body></html>");
  const std::string blank_png = m_dir.file("blank.png");
  ASSERT_EQ(chromium(m_chromium, m_dir, blank_html, "--screenshot=" + blank_png).exit_code, 0);
  const PngImage blank = decode_png(read_file(blank_png));
  EXPECT_EQ(blank.distinct_colours(), 1u);

  if (const char* update = std::getenv("TRACE2D_UPDATE_SCREENSHOT"); update != nullptr && std::string(update) == "1") {
    fs::copy_file(png, fs::path(TRACE2CTL_DOCS_DIR) / "report-fetch.png", fs::copy_options::overwrite_existing);
  }
}

TEST_F(ReportRender, DomHoldsTheSlicesOfTheFetch) {
  const ProcessResult dom = chromium(m_chromium, m_dir, m_html, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  const std::string& html = dom.out;
  // Chromium parsed the inline SVG into elements: its serialisation of them.
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame\""), std::string::npos)
      << html.substr(0, 2000);
  for (const char* slice : {"data-name=\"fetch\"", "data-name=\"remote_refs\"", "data-name=\"fetch_refs\"",
                            "data-name=\"consume_refs\"", "data-name=\"upload-pack\"", "data-name=\"pack-objects\"",
                            "data-name=\"unpack-objects\"", "data-name=\"rev-list\"",
                            "data-name=\"git-upload-pack '/tmp/t2d-capture-EENcx1/upstream'\"",
                            "<title>fetch:fetch_refs\nstart 4.417 ms, 18.158 ms</title>"}) {
    EXPECT_NE(html.find(slice), std::string::npos) << slice;
  }
  EXPECT_NE(html.find("<td>fetch</td>"), std::string::npos) << "the summary table";
}

// The whole report of the captured traces (five flame charts, failed runs
// with their trees opened) fits a 1280-pixel window: nothing reaches past
// its right edge, and every chart is drawn within it.
TEST_F(ReportRender, TheWholeReportFitsA1280PixelWindow) {
  const std::string whole = m_dir.file("whole.html");
  const ProcessResult report = run_ctl({"--db", imported_traces_db(), "report", "--html", whole});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const auto layout = measure_layout(m_chromium, m_dir, whole, k_window);
  ASSERT_TRUE(layout.has_value());
  expect_report_fits_window(*layout, k_width);
  EXPECT_EQ(layout->charts.size(), 5u);
  // The measuring script went into a copy: the page itself has none.
  EXPECT_EQ(read_file(whole).find("<script"), std::string::npos);
}

// Labels at the charts' right edge, of the widest glyphs the font has, in
// bold process bars and regular ones, and axes whose last tick falls just
// short of the edge: Chromium draws every label inside its chart. (Widths
// estimated from an average glyph let "70 ms" or a bar's "qqq..." run past
// the edge: a report of real runs failed so, depending on its times.)
TEST_F(ReportRender, LabelsOfWideGlyphsStayInsideTheirCharts) {
  using ctl::render::Bar;
  using ctl::render::BarKind;
  const std::vector<std::string> labels = {
      std::string(60, 'm'), std::string(60, 'W'), std::string(80, 'q'), "%%%%@@@@####&&&&~~~~====++++<<<<>>>>",
      "0123456789 ms 0123456789 ms 0123456789 ms 0123456789",
      "\xE6\xBC\xA2\xE5\xAD\x97\xE6\xBC\xA2\xE5\xAD\x97\xE6\xBC\xA2\xE5\xAD\x97\xE6\xBC\xA2\xE5\xAD\x97"
      "\xE6\xBC\xA2\xE5\xAD\x97\xE6\xBC\xA2\xE5\xAD\x97"};
  std::string page = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>";
  page += ctl::render::report_style();
  page += "</style></head><body>";
  int charts = 0;
  // Spans whose last tick ("70 ms", "700 ms", "7 s") lands 10-50 px before
  // the right edge: about as far as its label is wide.
  for (const double span : {0.0710, 0.0713, 0.0716, 0.0719, 0.0722, 0.7125, 0.7165, 0.7205, 7.135, 7.19}) {
    ctl::render::FlameLayout layout;
    layout.span = span;
    int row = 0;
    for (const std::string& label : labels) {
      for (const BarKind kind : {BarKind::process, BarKind::region}) {
        // One bar to the right edge, wide enough for part of its label,
        // and one bar just wide enough for a few characters.
        for (const double from : {0.55, 0.97}) {
          Bar bar;
          bar.kind = kind;
          bar.start = span * from;
          bar.end = span;
          bar.row = row++;
          bar.label = label;
          bar.tooltip = label;
          bar.category = kind == BarKind::region ? "index" : "";
          layout.bars.push_back(bar);
        }
      }
    }
    layout.rows = row;
    ctl::render::append_flame_svg(page, layout);
    ++charts;
  }
  page += "</body></html>";
  const std::string html = m_dir.file("edges.html");
  write_file(html, page);
  const auto layout = measure_layout(m_chromium, m_dir, html, k_window);
  ASSERT_TRUE(layout.has_value());
  ASSERT_EQ(layout->charts.size(), static_cast<std::size_t>(charts));
  for (const ChartBox& chart : layout->charts) {
    EXPECT_EQ(chart.labels_outside, 0) << "a chart " << chart.width << " px wide";
  }
  EXPECT_LE(layout->scroll_width, k_width);
}

}  // namespace
}  // namespace trace2d::test
