#include "tests/support/chromium.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace trace2d::test {
namespace {

namespace fs = std::filesystem;

// Measures the page as laid out, then writes one fact a line into a
// hidden <pre> (appended after measuring, so it widens nothing):
//   viewport W / scroll_width W / past TAG.class RIGHT / chart L R W H LABELS_OUTSIDE / section ID
constexpr const char* k_measuring_script = R"js(
<script>
(function () {
  for (const d of document.querySelectorAll('details')) { d.open = true; }
  const viewport = document.documentElement.clientWidth;
  const lines = ['viewport ' + viewport,
                 'scroll_width ' + Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)];
  for (const e of document.body.querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) { continue; }
    if (r.right > viewport + 0.5) {
      lines.push('past ' + e.tagName.toLowerCase() + '.' + (e.getAttribute('class') || '').replace(/\s+/g, '.') +
                 ' ' + r.right.toFixed(1));
    }
  }
  for (const svg of document.querySelectorAll('svg.flame')) {
    const r = svg.getBoundingClientRect();
    let outside = 0;
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBoundingClientRect();
      if (b.left < r.left - 0.5 || b.right > r.right + 0.5) { outside += 1; }
    }
    lines.push('chart ' + [r.left, r.right, r.width, r.height].map(v => v.toFixed(1)).join(' ') + ' ' + outside);
  }
  for (const s of document.querySelectorAll('section[id]')) { lines.push('section ' + s.id); }
  const out = document.createElement('pre');
  out.id = 't2d-measured';
  out.hidden = true;
  out.textContent = lines.join('\n');
  document.body.appendChild(out);
})();
</script>
)js";

}  // namespace

std::optional<std::string> find_chromium() {
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env != nullptr ? path_env : "/usr/bin:/bin";
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    for (std::size_t start = 0; start <= path.size();) {
      const std::size_t end = std::min(path.find(':', start), path.size());
      const fs::path candidate = fs::path(path.substr(start, end - start)) / name;
      if (::access(candidate.c_str(), X_OK) == 0) {
        return candidate.string();
      }
      start = end + 1;
    }
  }
  return std::nullopt;
}

ProcessResult run_chromium(const std::string& binary, const TempDir& dir, const std::string& html,
                           const std::vector<std::string>& actions, BrowserWindow window) {
  ProcessSpec spec;
  spec.argv = {binary,
               "--headless",
               "--no-sandbox",
               "--disable-gpu",
               "--disable-quic",
               "--no-first-run",
               "--disable-background-networking",
               "--disable-component-update",
               "--disable-sync",
               "--hide-scrollbars",
               "--force-device-scale-factor=1",
               "--user-data-dir=" + dir.file("profile"),
               "--window-size=" + std::to_string(window.width) + "," + std::to_string(window.height)};
  spec.argv.insert(spec.argv.end(), actions.begin(), actions.end());
  spec.argv.push_back("file://" + html);
  spec.env = {{"HOME", dir.path().string()}};
  return run_process(spec, std::chrono::seconds(120));
}

std::optional<PageLayout> measure_layout(const std::string& binary, const TempDir& dir, const std::string& html,
                                         BrowserWindow window) {
  std::string page = read_file(html);
  const auto body_end = page.rfind("</body>");
  if (body_end == std::string::npos) {
    ADD_FAILURE() << "no </body> in " << html;
    return std::nullopt;
  }
  page.insert(body_end, k_measuring_script);
  const std::string copy = dir.file("measured-" + fs::path(html).filename().string());
  write_file(copy, page);
  const ProcessResult dom = run_chromium(binary, dir, copy, {"--virtual-time-budget=5000", "--dump-dom"}, window);
  if (dom.exit_code != 0) {
    ADD_FAILURE() << "chromium --dump-dom failed: " << dom.err;
    return std::nullopt;
  }
  const std::string open_tag = "<pre id=\"t2d-measured\" hidden=\"\">";
  const auto start = dom.out.find(open_tag);
  const auto end = start == std::string::npos ? start : dom.out.find("</pre>", start);
  if (end == std::string::npos) {
    ADD_FAILURE() << "the measuring script wrote nothing: " << dom.out.substr(0, 2000) << dom.err;
    return std::nullopt;
  }
  PageLayout layout;
  std::istringstream lines(dom.out.substr(start + open_tag.size(), end - start - open_tag.size()));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "viewport") {
      words >> layout.viewport_width;
    } else if (key == "scroll_width") {
      words >> layout.scroll_width;
    } else if (key == "past") {
      layout.past_right_edge.push_back(line.substr(5));
    } else if (key == "chart") {
      ChartBox box;
      words >> box.left >> box.right >> box.width >> box.height >> box.labels_outside;
      layout.charts.push_back(box);
    } else if (key == "section") {
      std::string id;
      words >> id;
      layout.sections.push_back(id);
    }
  }
  return layout;
}

void expect_report_fits_window(const PageLayout& layout, int width) {
  EXPECT_EQ(layout.viewport_width, width);
  EXPECT_LE(layout.scroll_width, width);
  std::string past;
  for (const std::string& element : layout.past_right_edge) {
    past += element + "\n";
  }
  EXPECT_TRUE(layout.past_right_edge.empty()) << past;
  for (const ChartBox& chart : layout.charts) {
    EXPECT_GT(chart.width, 600);
    EXPECT_GT(chart.height, 40);
    EXPECT_EQ(chart.labels_outside, 0) << "a label the chart clips";
    EXPECT_GE(chart.left, 0);
    EXPECT_LE(chart.right, width);
  }
  for (const char* id : {"commands", "repositories", "failed-runs", "regressions", "advice", "slowest"}) {
    EXPECT_NE(std::find(layout.sections.begin(), layout.sections.end(), id), layout.sections.end()) << id;
  }
}

}  // namespace trace2d::test
