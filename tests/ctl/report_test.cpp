// trace2ctl report --html: the page's content and self-containment (the
// rendering in a real browser is in report_render_test.cpp).

#include <gtest/gtest.h>
#include <simdjson.h>

#include <regex>
#include <string>

#include "tests/ctl/imported_traces.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

TEST(Trace2ctlReport, WritesOneSelfContainedPage) {
  TempDir dir;
  const std::string file = dir.file("report.html");
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "report", "--html", file});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("wrote " + file + ": 23 commands, 5 process trees"), std::string::npos) << result.out;
  const std::string html = read_file(file);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  // Nothing to fetch: no scripts, stylesheets, images, fonts or imports;
  // the only URL is the SVG namespace, which browsers never load.
  for (const char* fetching : {"<script", "<link", "<img", "<iframe", "src=", "url(", "@import", "@font-face"}) {
    EXPECT_EQ(html.find(fetching), std::string::npos) << fetching;
  }
  EXPECT_EQ(count_of(html, "http"), count_of(html, "http://www.w3.org/2000/svg"));
  // The summary: one row per command.
  const auto table = [&](const std::string& css_class) {
    const auto start = html.find("<table class=\"" + css_class + "\">");
    return start == std::string::npos ? std::string() : html.substr(start, html.find("</table>", start) - start);
  };
  EXPECT_EQ(count_of(table("stats"), "<tr><td>"), 23u);
  // The failed runs: a checkout of a missing branch (exit 1) and a
  // rev-parse of invalid UTF-8 (exit 128), newest first.
  const std::string failed = table("failed");
  EXPECT_EQ(count_of(failed, "<tr><td>"), 2u) << failed;
  EXPECT_NE(failed.find("git checkout no-such-branch"), std::string::npos) << failed;
  EXPECT_LT(html.find("<h2 id=\"failed\">Failed runs</h2>"), html.find("<h2>Slowest process trees</h2>"));
  // The five slowest trees, slowest first: the clone, then the gc.
  EXPECT_EQ(count_of(html, "<section class=\"tree\""), 5u);
  const auto clone = html.find("data-sid=\"" + std::string(k_clone_sid) + "\"");
  ASSERT_NE(clone, std::string::npos);
  EXPECT_LT(clone, html.find("<section class=\"tree\" id=\"tree-2\""));
  EXPECT_EQ(count_of(html, "<svg "), 5u);
}

TEST(Trace2ctlReport, FlameChartOfAFetchHoldsItsRegionsAndChildren) {
  TempDir dir;
  const std::string file = dir.file("fetch.html");
  const ProcessResult result =
      run_ctl({"--db", imported_traces_db(), "report", "--html", file, "--cmd", "fetch", "--limit", "1"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string html = read_file(file);
  EXPECT_EQ(count_of(html, "<section class=\"tree\""), 1u);
  // 5 processes, 4 child spans (3 of fetch, 1 of upload-pack), 14 regions
  // (11 of fetch, 3 of pack-objects).
  EXPECT_EQ(count_of(html, "<g class=\"bar process"), 5u);
  EXPECT_EQ(count_of(html, "<g class=\"bar child"), 4u);
  EXPECT_EQ(count_of(html, "<g class=\"bar region"), 14u);
  EXPECT_NE(html.find("<g class=\"bar region\" data-name=\"remote_refs\" data-start-ms=\"1.255\" "
                      "data-elapsed-ms=\"3.048\"><title>fetch:remote_refs\nstart 1.255 ms, 3.048 ms</title>"),
            std::string::npos);
  EXPECT_NE(html.find("<g class=\"bar child\" data-name=\"git-upload-pack &#39;/tmp/t2d-capture-EENcx1/upstream&#39;\" "
                      "data-start-ms=\"1.290\" data-elapsed-ms=\"21.277\">"),
            std::string::npos);
  EXPECT_NE(html.find("<g class=\"bar process\" data-name=\"upload-pack\" data-start-ms=\"3.259\""), std::string::npos);
  // Labels only where they fit: the 28 ms fetch bar has one.
  EXPECT_TRUE(std::regex_search(html, std::regex("data-name=\"fetch\"[^>]*><title>[^<]*</title><rect[^>]*/><text")));
}

TEST(Trace2ctlReport, EmptyWindowAndJsonSummary) {
  SampleDatabase db;
  TempDir dir;
  const std::string file = dir.file("empty.html");
  const ProcessResult result =
      run_ctl({"--db", db.path(), "--json", "report", "--html", file, "--since", "2099-01-01"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::object summary;
  ASSERT_EQ(parser.parse(result.out).get(summary), simdjson::SUCCESS) << result.out;
  EXPECT_EQ(std::string_view(summary["file"].get_string().value()), file);
  EXPECT_EQ(summary["commands"].get_int64().value(), 0);
  EXPECT_EQ(summary["trees"].get_array().value().size(), 0u);
  const std::string html = read_file(file);
  EXPECT_NE(html.find("No sessions in this window."), std::string::npos);
  EXPECT_NE(html.find("sessions since 2099-01-01T00:00:00.000000Z"), std::string::npos);

  const ProcessResult missing = run_ctl({"--db", db.path(), "report"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--html"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace trace2d::test
