#pragma once
// Headless Chromium (Debian's `chromium`, installed by .ci/deps) for the
// tests of the HTML report: screenshots, the DOM it parsed, and the layout
// it computed at a given window width.

#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {

// The browser's path, or nullopt when none is installed.
[[nodiscard]] std::optional<std::string> find_chromium();

struct BrowserWindow {
  int width = 1280;
  int height = 900;
};

// Chromium on the page `html` with `action` (--screenshot=FILE,
// --dump-dom): no network, no first-run UI, a profile of its own in `dir`.
ProcessResult run_chromium(const std::string& binary, const TempDir& dir, const std::string& html,
                           const std::vector<std::string>& actions, BrowserWindow window = {});

struct ChartBox {
  double left = 0;
  double right = 0;
  double width = 0;
  double height = 0;
  int labels_outside = 0;  // <text> reaching past the chart's box: clipped ("80 m")
};

// What the browser laid out: the page's width, every element that reaches
// past the window's right edge (tag.class and its right edge), each flame
// chart's box, and the ids of the page's sections.
struct PageLayout {
  int viewport_width = 0;
  int scroll_width = 0;
  std::vector<std::string> past_right_edge;
  std::vector<ChartBox> charts;
  std::vector<std::string> sections;
};

// Lays out a copy of `html` in `dir` with every <details> opened: a script
// appended to the copy (never to the page under test) measures it and
// writes the result into the DOM, which --dump-dom returns. Fails the
// calling test (and returns nullopt) when the browser or the script fails.
[[nodiscard]] std::optional<PageLayout> measure_layout(const std::string& binary, const TempDir& dir,
                                                       const std::string& html, BrowserWindow window = {});

// The report's layout checks, shared by the tests that render one: the page
// is no wider than the window and nothing reaches past its right edge; every
// flame chart is drawn within it, at a readable size, no label clipped; each
// of the report's sections is there. (How many charts: the caller's check.)
void expect_report_fits_window(const PageLayout& layout, int width);

}  // namespace trace2d::test
