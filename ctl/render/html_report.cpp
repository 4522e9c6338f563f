#include "ctl/render/html_report.hpp"

#include <exception>

#include <variant>

#include "ctl/output/display.hpp"
#include "ctl/render/describe.hpp"
#include "ctl/render/flame_layout.hpp"
#include "ctl/render/flame_svg.hpp"
#include "ctl/render/html_text.hpp"
#include "ctl/render/report_sections.hpp"

namespace trace2d::ctl::render {
namespace {

// System fonts only: the page must render the same offline. Nothing may
// widen the page past the window: tables take its width and break long
// words anywhere, a tree's text scrolls inside its own box, and a chart
// scales down (docs/reports.md, "Layout").
constexpr std::string_view k_style = R"css(
body { font: 14px/1.4 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; margin: 24px; color: #1d1d1f; background: #fff; overflow-wrap: anywhere; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 4px; }
nav { margin: 0 0 8px; }
nav a { margin-right: 14px; }
a { color: #0a58ca; }
.meta { color: #6e6e73; margin: 0 0 12px; }
.lost { color: #b00020; font-weight: 600; margin: 0 0 12px; }
.verdict { margin: 4px 0 12px; font-weight: 600; }
table { border-collapse: collapse; margin: 8px 0 16px; width: 100%; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e5e5ea; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f2f2f7; font-weight: 600; white-space: nowrap; overflow-wrap: normal; }
.time { white-space: nowrap; overflow-wrap: normal; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; overflow-wrap: normal; }
table.stats, table.repositories, table.regressions { width: auto; max-width: 100%; }
td.bad, tr.slower td.bad { color: #b00020; font-weight: 600; }
td.good { color: #1a7f37; font-weight: 600; }
td.argv { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; overflow-wrap: anywhere; }
details.failed-tree { margin: 4px 0; }
details.failed-tree summary { cursor: pointer; }
pre.tree-text { font: 12px/1.35 "DejaVu Sans Mono", monospace; background: #f7f7f9; padding: 8px; margin: 4px 0 8px; overflow-x: auto; max-width: 100%; box-sizing: border-box; }
.finding { border-left: 3px solid #f28e2b; padding: 2px 12px; margin: 8px 0 14px; }
.finding p { margin: 2px 0; }
.finding .what { font-weight: 600; }
.flame { display: block; width: 100%; max-width: 1180px; height: auto; font: 11px "DejaVu Sans", Arial, sans-serif; }
.flame .axis line { stroke: #e5e5ea; stroke-width: 1; }
.flame .axis text { fill: #6e6e73; }
.flame .bar rect { stroke: #fff; stroke-width: 0.5; }
.flame .bar text { fill: #1d1d1f; pointer-events: none; }
.flame .process rect { fill: #4e79a7; }
.flame .process text { fill: #fff; font-weight: 600; }
.flame .child rect { fill: #f28e2b; }
.flame .thread rect { fill: #a0cbe8; }
.flame .open rect { stroke: #e15759; stroke-dasharray: 3 2; stroke-width: 1; }
.flame .bar:hover rect { stroke: #1d1d1f; stroke-width: 1; }
ul.legend { list-style: none; padding: 0; margin: 4px 0 6px; color: #6e6e73; font-size: 12px; }
ul.legend li { display: inline-block; margin-right: 14px; }
ul.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; }
)css";

std::int64_t events_left_out(const std::vector<model::Node>& nodes) {
  std::int64_t n = 0;
  for (const model::Node& node : nodes) {
    n += (node.process() != nullptr ? node.process()->events_left_out : 0) + events_left_out(node.children);
  }
  return n;
}

const model::ProcessInfo* top_process(const model::ProcessTree& tree) {
  return tree.processes.empty() ? nullptr : tree.processes.front().process();
}

void append_tree_list(std::string& out, const std::vector<model::ProcessTree>& trees) {
  out += "<table class=\"slowest\"><thead><tr><th class=\"num\">#</th><th>Command</th><th class=\"num\">Took</th>"
         "<th>Outcome</th><th class=\"num\">Processes</th><th>Started</th><th>Command line</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < trees.size(); ++i) {
    const model::ProcessInfo* process = top_process(trees[i]);
    if (process == nullptr) {
      continue;
    }
    out += "<tr><td class=\"num\"><a href=\"#tree-" + std::to_string(i + 1) + "\">" + std::to_string(i + 1) +
           "</a></td><td>";
    append_cut_text(out, process_name(*process), 60);
    out += "</td><td class=\"num\">" + human_duration(trees[i].processes.front().elapsed) + "</td><td>";
    append_html_escaped(out, process_outcome(*process));
    out += "</td><td class=\"num\">" + std::to_string(model::count_processes(trees[i])) + "</td><td class=\"time\">";
    append_html_escaped(out, process->start_time ? display_time(*process->start_time) : "");
    out += "</td><td class=\"argv\">";
    append_cut_text(out, join_argv(process->argv), 160);
    out += "</td></tr>\n";
  }
  out += "</tbody></table>\n";
}

// Lines the processes of a tree lost to a bound (sessions.lines_lost), and
// how many processes lost some: such a tree is marked as not whole.
void count_lost_lines(const std::vector<model::Node>& nodes, std::int64_t& lines, std::size_t& processes) {
  for (const model::Node& node : nodes) {
    if (const model::ProcessInfo* process = node.process(); process != nullptr && process->lines_lost > 0) {
      lines += process->lines_lost;
      ++processes;
    }
    count_lost_lines(node.children, lines, processes);
  }
}

void append_tree_section(std::string& out, const model::ProcessTree& tree, std::size_t index) {
  const model::ProcessInfo* process = top_process(tree);
  if (process == nullptr) {
    return;
  }
  out += "<section class=\"tree\" id=\"tree-" + std::to_string(index) + "\" data-sid=\"";
  append_html_escaped(out, tree.root);
  out += "\"><h2>" + std::to_string(index) + ". ";
  append_cut_text(out, process_name(*process), 60);
  out += " &mdash; " + human_duration(tree.processes.front().elapsed) + "</h2>\n<p class=\"meta\">";
  append_cut_text(out, join_argv(process->argv), 300);
  out += " &middot; ";
  append_html_escaped(out, process_outcome(*process));
  out += " &middot; started ";
  append_html_escaped(out, process->start_time ? display_time(*process->start_time) : "?");
  out += " &middot; sid <code>";
  append_html_escaped(out, tree.root);
  out += "</code></p>\n";
  std::int64_t lost = 0;
  std::size_t losing = 0;
  count_lost_lines(tree.processes, lost, losing);
  if (lost > 0) {
    out += "<p class=\"lost\">Not whole: " + std::to_string(lost) + " lines of " + std::to_string(losing) +
           (losing == 1 ? " process" : " processes") +
           " were lost before they could be stored (see each session's problems).</p>\n";
  }
  const FlameLayout layout = layout_flame(tree);
  append_flame_legend(out, layout);
  append_flame_svg(out, layout);
  if (layout.untimed > 0) {
    out += "<p class=\"meta\">" + std::to_string(layout.untimed) +
           " entries carry no times (brief mode) and are not drawn.</p>";
  }
  if (layout.folded > 0) {
    out += "<p class=\"meta folded\" data-folded=\"" + std::to_string(layout.folded) + "\">" +
           std::to_string(layout.folded) + " more entries are not drawn: a chart draws its first " +
           std::to_string(k_max_flame_bars) +
           " (<code>trace2ctl tree SID</code> lists them; <code>--min-ms</code> leaves out the short ones).</p>";
  }
  const std::int64_t left_out = events_left_out(tree.processes);
  if (left_out > 0) {
    out += "<p class=\"meta left-out\" data-events-left-out=\"" + std::to_string(left_out) + "\">" +
           std::to_string(left_out) + " events past each session's first " + std::to_string(k_report_events_per_session) +
           " were not read: what they began is not drawn (<code>trace2ctl show SID</code> lists every event).</p>";
  }
  out += "</section>\n";
}

}  // namespace

std::string_view report_style() { return k_style; }

void append_html_report(std::string& out, const HtmlReport& report) {
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
         "<title>trace2d report</title><style>";
  out += k_style;
  out += "</style></head><body>\n<h1>trace2d report</h1>\n<p class=\"meta\">";
  append_html_escaped(out, report.window);
  out += " &middot; database <code>";
  append_html_escaped(out, report.database);
  out += "</code> &middot; generated ";
  append_html_escaped(out, report.generated_at);
  out += "</p>\n<nav><a href=\"#commands\">Commands</a><a href=\"#repositories\">Repositories</a>"
         "<a href=\"#failed-runs\">Failed runs</a><a href=\"#regressions\">Regressions</a>"
         "<a href=\"#advice\">Advice</a><a href=\"#slowest\">Slowest runs</a></nav>\n";
  append_command_summary(out, report);
  append_repository_summary(out, report.repositories);
  append_failed_runs(out, report.failed_runs);
  append_regressions(out, report.regressions);
  append_advice(out, report.advice);
  out += "<section id=\"slowest\"><h2>Slowest process trees</h2>\n";
  if (report.trees.empty()) {
    out += "<p class=\"meta\">No finished sessions in this window.</p>\n";
  } else {
    out += "<p class=\"meta\">Each run with everything it started, drawn along one time axis: a bar per git "
           "process, region, child process and thread, nested as they ran; hover a bar for its times.</p>\n";
    append_tree_list(out, report.trees);
  }
  out += "</section>\n";
  for (const std::string& problem : report.problems) {
    out += "<p class=\"meta\">";
    append_html_escaped(out, problem);
    out += "</p>\n";
  }
  // One tree that cannot be drawn (whatever a user stored) must not cost
  // everyone the page: its section says so, the others are drawn.
  for (std::size_t i = 0; i < report.trees.size(); ++i) {
    std::string section;
    try {
      append_tree_section(section, report.trees[i], i + 1);
    } catch (const std::exception& e) {
      section = "<section class=\"tree\" id=\"tree-" + std::to_string(i + 1) + "\"><p class=\"meta\">";
      append_html_escaped(section, "The tree of " + report.trees[i].root + " could not be drawn: " + e.what());
      section += "</p></section>\n";
    }
    out += section;
  }
  out += "</body></html>\n";
}

}  // namespace trace2d::ctl::render
