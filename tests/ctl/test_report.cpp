// trace2ctl report --html: the page's content and self-containment (the
// rendering in a real browser is in test_report_render.cpp).

#include <gtest/gtest.h>
#include <simdjson.h>

#include <regex>
#include <string>

#include "proto/timestamp.hpp"
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
  // What the user ran: 11 commands (--all: the 23 of every process, below).
  EXPECT_NE(result.out.find("wrote " + file + ": 11 commands, 5 process trees"), std::string::npos) << result.out;
  const std::string html = read_file(file);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  // Nothing to fetch: no scripts, stylesheets, images, fonts or imports;
  // the only URL is the SVG namespace, which browsers never load.
  for (const char* fetching : {"<script", "<link", "<img", "<iframe", "src=", "url(", "@import", "@font-face"}) {
    EXPECT_EQ(html.find(fetching), std::string::npos) << fetching;
  }
  EXPECT_EQ(count_of(html, "http"), count_of(html, "http://www.w3.org/2000/svg"));
  // The summary: one row per command the user ran.
  const auto table = [&](const std::string& css_class) {
    const auto start = html.find("<table class=\"" + css_class + "\">");
    return start == std::string::npos ? std::string() : html.substr(start, html.find("</table>", start) - start);
  };
  EXPECT_EQ(count_of(table("stats"), "<tr><td>"), 11u);
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

  // --all: every git process, as the listings take it.
  const std::string all_file = dir.file("all.html");
  const ProcessResult all = run_ctl({"--db", imported_traces_db(), "report", "--html", all_file, "--all"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("wrote " + all_file + ": 23 commands, 5 process trees"), std::string::npos) << all.out;
}

std::string section_of(const std::string& html, const std::string& id) {
  const auto start = html.find("<section id=\"" + id + "\">");
  return start == std::string::npos ? std::string() : html.substr(start, html.find("</section>", start) - start);
}

// Issue 25, item 6: the page reads from the top as a person asks, in
// words and units, the commands by the names the user typed.
TEST(Trace2ctlReport, SectionsReadInWordsAndUnits) {
  TempDir dir;
  const std::string file = dir.file("report.html");
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "report", "--html", file});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string html = read_file(file);
  std::size_t previous = 0;
  for (const char* id : {"commands", "repositories", "failed-runs", "regressions", "advice", "slowest"}) {
    const auto at = html.find("<section id=\"" + std::string(id) + "\">");
    ASSERT_NE(at, std::string::npos) << id;
    EXPECT_GT(at, previous) << id << " in its place";
    previous = at;
    EXPECT_NE(html.find("<a href=\"#" + std::string(id) + "\">"), std::string::npos) << id << " in the contents";
  }
  // Headers for a person, times in their unit; no column of the database.
  const std::string commands = section_of(html, "commands");
  EXPECT_NE(commands.find("<th>Command</th><th class=\"num\">Runs</th><th class=\"num\">Failed</th>"),
            std::string::npos)
      << commands;
  for (const char* header : {">Median</th>", ">p90</th>", ">Slowest</th>", ">Total</th>"}) {
    EXPECT_NE(commands.find(header), std::string::npos) << header;
  }
  // (The charts carry data-*-ms attributes, the failed runs' trees `tree`'s own header.)
  const std::string tables = html.substr(0, html.find("<section class=\"tree\""));
  for (const char* raw : {"p50_elapsed", "_ms</th>", "cmd_name", "exit_code", "<th>elapsed"}) {
    EXPECT_EQ(tables.find(raw), std::string::npos) << raw;
  }
  EXPECT_NE(commands.find("<tr><td>clone</td><td class=\"num\">1</td><td class=\"num\"></td><td "
                          "class=\"num\"></td><td class=\"num\">297 ms</td>"),
            std::string::npos)
      << commands;
  // The user's alias `co` under its name; git's internal processes (the
  // clone's index-pack, the gc's repack) only in the trees.
  EXPECT_NE(commands.find("<tr><td>co</td>"), std::string::npos);
  for (const char* internal : {"<tr><td>index-pack</td>", "<tr><td>repack</td>", "<tr><td>upload-pack</td>"}) {
    EXPECT_EQ(commands.find(internal), std::string::npos) << internal;
  }
  // Per repository: the worktrees by their last component, whole on hover.
  const std::string repositories = section_of(html, "repositories");
  EXPECT_NE(repositories.find("<tr><td><span title=\"/tmp/t2d-capture-EENcx1/repo\">repo</span></td>"
                              "<td class=\"num\">14</td><td class=\"num bad\">2</td>"),
            std::string::npos)
      << repositories;
  // Not a week of runs on both sides: said plainly.
  EXPECT_NE(section_of(html, "regressions").find("Not enough data to say what got slower"), std::string::npos);
  EXPECT_NE(section_of(html, "advice").find("No advice"), std::string::npos);
  // Each chart with the legend of its colours, the categories it draws.
  const std::string clone = html.substr(html.find("<section class=\"tree\" id=\"tree-1\""));
  EXPECT_LT(clone.find("<ul class=\"legend\"><li class=\"process\"><i style=\"background:#4e79a7\"></i>git process</li>"),
            clone.find("<svg "));
  EXPECT_NE(clone.find("region pack-objects</li>"), std::string::npos);
}

// Each failed run: git's first error as its reason, a link to its tree,
// and the tree as `trace2ctl tree` draws it.
TEST(Trace2ctlReport, FailedRunsSayWhyAndLinkToTheirTrees) {
  TempDir dir;
  const std::string file = dir.file("report.html");
  ASSERT_EQ(run_ctl({"--db", imported_traces_db(), "report", "--html", file}).exit_code, 0);
  const std::string failed = section_of(read_file(file), "failed-runs");
  EXPECT_NE(failed.find("<td>checkout</td><td class=\"reason\">pathspec &#39;no-such-branch&#39; did not match any "
                        "file(s) known to git</td><td class=\"num\">1.7 ms</td><td class=\"argv\">git checkout "
                        "no-such-branch</td><td><a href=\"#failed-2\">tree</a></td>"),
            std::string::npos)
      << failed;
  const auto tree = failed.find("<details class=\"failed-tree\" id=\"failed-2\" data-sid=\"");
  ASSERT_NE(tree, std::string::npos) << failed;
  const std::string details = failed.substr(tree, failed.find("</details>", tree) - tree);
  EXPECT_NE(details.find("<pre class=\"tree-text\">start_ms  elapsed_ms  tree\n"), std::string::npos) << details;
  EXPECT_NE(details.find("checkout  git checkout no-such-branch  [pid 5593, exit 1]"), std::string::npos) << details;
  EXPECT_NE(details.find("├─ index:do_read_index  .git/index"), std::string::npos) << details;
  // The rev-parse of invalid UTF-8: its reason too.
  EXPECT_NE(failed.find("ambiguous argument"), std::string::npos);
}

// Times read as the tables show them: local, with the zone's name, or UTC
// with --utc (the failing checkout started at 2026-11-22T00:04:30.470844Z).
TEST(Trace2ctlReport, TimesAreLocalWithTheirZoneOrUtc) {
  TempDir dir;
  const std::string file = dir.file("report.html");
  ASSERT_EQ(run_ctl({"--db", imported_traces_db(), "report", "--html", file, "--since", "2026-11-21 12:00"},
                    {{"TZ", "America/New_York"}})
                .exit_code,
            0);
  const std::string local = read_file(file);
  EXPECT_NE(section_of(local, "failed-runs").find("<span class=\"time\">2026-11-21 19:04:30.470 EST</span>"),
            std::string::npos)
      << section_of(local, "failed-runs");
  EXPECT_NE(local.find("sessions since 2026-11-21 12:00:00.000 EST"), std::string::npos);
  EXPECT_EQ(local.find("2026-11-22T00:04:30"), std::string::npos) << "no stored UTC text on the page";
  EXPECT_TRUE(std::regex_search(local, std::regex(R"(generated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} E[SD]T)")));
  // What got slower: its windows to the minute.
  EXPECT_TRUE(
      std::regex_search(section_of(local, "regressions"),
                        std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d E[SD]T \.\. \d{4}-\d\d-\d\d \d\d:\d\d E[SD]T)")))
      << section_of(local, "regressions");

  ASSERT_EQ(run_ctl({"--db", imported_traces_db(), "--utc", "report", "--html", file, "--since", "2026-11-21 12:00"},
                    {{"TZ", "America/New_York"}})
                .exit_code,
            0);
  const std::string utc = read_file(file);
  EXPECT_NE(section_of(utc, "failed-runs").find("<span class=\"time\">2026-11-22 00:04:30.470 UTC</span>"),
            std::string::npos);
  EXPECT_NE(utc.find("sessions since 2026-11-21 17:00:00.000 UTC"), std::string::npos);
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
      run_ctl({"--db", db.path(), "--json", "--utc", "report", "--html", file, "--since", "2099-01-01"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::object summary;
  ASSERT_EQ(parser.parse(result.out).get(summary), simdjson::SUCCESS) << result.out;
  EXPECT_EQ(std::string_view(summary["file"].get_string().value()), file);
  EXPECT_EQ(summary["commands"].get_int64().value(), 0);
  EXPECT_EQ(summary["trees"].get_array().value().size(), 0u);
  const std::string html = read_file(file);
  EXPECT_NE(html.find("No sessions in this window."), std::string::npos);
  EXPECT_NE(html.find("sessions since 2099-01-01 00:00:00.000 UTC"), std::string::npos);

  const ProcessResult missing = run_ctl({"--db", db.path(), "report"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--html"), std::string::npos) << missing.err;
}

// One git run as the events git 2.39 sends, `hook_seconds` of it in a
// pre-commit hook when not zero.
std::string git_run(const std::string& sid, const std::string& command, std::int64_t start_us, double elapsed,
                    double hook_seconds = 0, int exit_code = 0) {
  std::string lines;
  const auto line = [&](double t, const std::string& members) {
    lines += R"({"sid":")" + sid + R"(","thread":"main","time":")" +
             proto::format_utc_timestamp(start_us + static_cast<std::int64_t>(t * 1e6)) + "\"," + members + "}\n";
  };
  line(0, R"("event":"version","evt":"3","exe":"2.39.5")");
  line(0.001, R"("event":"start","t_abs":0.001,"argv":["git",")" + command + "\"]");
  line(0.001, R"("event":"def_repo","repo":1,"worktree":"/home/u/repo")");
  line(0.001, R"("event":"cmd_name","name":")" + command + R"(","hierarchy":")" + command + "\"");
  if (hook_seconds > 0) {
    line(0.01, R"("event":"child_start","t_abs":0.01,"child_id":0,"child_class":"hook","hook_name":"pre-commit",)"
               R"("use_shell":false,"argv":[".git/hooks/pre-commit"])");
    line(0.01 + hook_seconds, R"("event":"child_exit","t_abs":)" + std::to_string(0.01 + hook_seconds) +
                                  R"(,"child_id":0,"pid":4242,"code":0,"t_rel":)" + std::to_string(hook_seconds));
  }
  const std::string code = std::to_string(exit_code);
  line(elapsed, R"("event":"exit","t_abs":)" + std::to_string(elapsed) + R"(,"code":)" + code);
  line(elapsed, R"("event":"atexit","t_abs":)" + std::to_string(elapsed) + R"(,"code":)" + code);
  return lines;
}

// The regressions and advice sections hold `compare`'s and `advice`'s
// answers: `status` 30% slower this week than in the four before, and a
// pre-commit hook that takes half of every commit.
TEST(Trace2ctlReport, RegressionsAndAdviceAreCompareAndAdvicesAnswers) {
  constexpr std::int64_t k_hour_us = 3'600'000'000;
  constexpr std::int64_t k_day_us = 24 * k_hour_us;
  const std::int64_t now = proto::unix_now_us();
  std::string trace;
  for (int i = 0; i < 20; ++i) {
    trace += git_run("before-" + std::to_string(i), "status", now - (10 + i) * k_day_us, 0.100 + 0.001 * i);
    trace += git_run("after-" + std::to_string(i), "status", now - (1 + i) * k_hour_us, 0.130 + 0.001 * i);
  }
  for (int i = 0; i < 3; ++i) {
    trace += git_run("commit-" + std::to_string(i), "commit", now - (30 + i) * 60'000'000LL, 1.0, 0.5);
  }
  TempDir dir;
  write_file(dir.file("trace.jsonl"), trace);
  const std::string db = dir.file("trace2d.db");
  ProcessSpec import;
  import.argv = {TRACE2D_BIN, "--config", "", "import", "--db", db, dir.file("trace.jsonl")};
  const ProcessResult imported = run_process(import);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;

  const std::string file = dir.file("report.html");
  const ProcessResult result = run_ctl({"--db", db, "--json", "report", "--html", file});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string html = read_file(file);
  const std::string regressions = section_of(html, "regressions");
  EXPECT_NE(regressions.find("23 runs) against the 28 days before"), std::string::npos) << regressions;
  EXPECT_NE(regressions.find("<tr class=\"slower\"><td>status</td><td>whole run</td><td class=\"num\">20</td>"
                             "<td class=\"num\">20</td><td class=\"num\">109 ms</td><td class=\"num\">139 ms</td>"
                             "<td class=\"num bad\">+30 ms (+28%)</td><td class=\"num\">+25 ms .. +35 ms</td>"),
            std::string::npos)
      << regressions;
  EXPECT_EQ(regressions.find("Not enough data"), std::string::npos);
  // `compare --format json` says the same.
  const ProcessResult compare = run_ctl({"--db", db, "--json", "compare"});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.out.find(R"("verdict":"slower")"), std::string::npos) << compare.out;

  const std::string advice = section_of(html, "advice");
  EXPECT_NE(advice.find("<div class=\"finding\" data-rule=\"slow-hook\">"), std::string::npos) << advice;
  EXPECT_NE(advice.find("<p class=\"fix\">Fix: <code>git commit --no-verify</code></p>"), std::string::npos)
      << advice;
  EXPECT_NE(advice.find("3 of 3 runs of `commit`"), std::string::npos) << advice;
  EXPECT_NE(result.out.find(R"("regressions":1,"findings":1)"), std::string::npos) << result.out;
}

// One user's 300 failing commands with 4,000-character names cost the
// page its bounds, not its use: 100 commands listed and the rest counted,
// the 25 latest failures, each long text cut with the whole on hover.
TEST(Trace2ctlReport, ManyLongFailingCommandsKeepThePageBounded) {
  const std::int64_t now = proto::unix_now_us();
  const std::string long_name(4000, 'w');
  std::string trace;
  for (int i = 0; i < 300; ++i) {
    trace += git_run("many-" + std::to_string(i), std::to_string(i) + long_name, now - (i + 1) * 1'000'000LL, 0.01,
                     0, 1);
  }
  TempDir dir;
  write_file(dir.file("trace.jsonl"), trace);
  const std::string db = dir.file("trace2d.db");
  ProcessSpec import;
  import.argv = {TRACE2D_BIN, "--config", "", "import", "--db", db, dir.file("trace.jsonl")};
  ASSERT_EQ(run_process(import).exit_code, 0);

  const std::string file = dir.file("report.html");
  const ProcessResult result = run_ctl({"--db", db, "report", "--html", file});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find(": 300 commands, 5 process trees"), std::string::npos) << result.out;
  const std::string html = read_file(file);
  const std::string commands = section_of(html, "commands");
  EXPECT_EQ(count_of(commands, "<tr><td>"), 100u);
  EXPECT_NE(commands.find("200 more commands are not shown"), std::string::npos);
  EXPECT_EQ(count_of(section_of(html, "failed-runs"), "<details class=\"failed-tree\""), 25u);
  // A name is cut on the page and whole (to a bound) in its title.
  EXPECT_NE(commands.find("<span class=\"cut\" title=\"0" + long_name.substr(0, 1999) + "\">0" +
                          long_name.substr(0, 59) + "\xE2\x80\xA6</span>"),
            std::string::npos);
  EXPECT_LT(html.size(), 2'000'000u) << "300 runs of 8 KB of names each";
}

}  // namespace
}  // namespace trace2d::test
