#include "ctl/render/html_report.hpp"

#include <exception>

#include <variant>

#include "ctl/output/table.hpp"
#include "ctl/render/describe.hpp"
#include "ctl/render/flame_layout.hpp"
#include "ctl/render/flame_svg.hpp"
#include "ctl/render/html_text.hpp"

namespace trace2d::ctl::render {
namespace {

// System fonts only: the page must render the same offline.
constexpr std::string_view k_style = R"css(
body { font: 14px/1.4 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; margin: 24px; color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 4px; }
.meta { color: #6e6e73; margin: 0 0 12px; }
.lost { color: #b00020; font-weight: 600; margin: 0 0 12px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e5e5ea; text-align: left; white-space: nowrap; }
th { background: #f2f2f7; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.flame { display: block; max-width: 100%; height: auto; font: 11px "DejaVu Sans", Arial, sans-serif; }
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
.legend span { display: inline-block; margin-right: 14px; color: #6e6e73; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; }
)css";

void append_cell(std::string& out, const Value& value) {
  const bool numeric = std::holds_alternative<std::int64_t>(value) || std::holds_alternative<double>(value);
  out += numeric ? "<td class=\"num\">" : "<td>";
  append_html_escaped(out, cell_text(value));
  out += "</td>";
}

void append_result_table(std::string& out, const ResultSet& stats, const std::string& css_class,
                         const std::string& when_empty) {
  if (stats.rows.empty()) {
    out += "<p class=\"meta\">" + when_empty + "</p>\n";
    return;
  }
  out += "<table class=\"" + css_class + "\"><thead><tr>";
  for (const std::string& column : stats.columns) {
    out += "<th>";
    append_html_escaped(out, column);
    out += "</th>";
  }
  out += "</tr></thead><tbody>\n";
  for (const Row& row : stats.rows) {
    out += "<tr>";
    for (const Value& value : row) {
      append_cell(out, value);
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

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
  out += "<table class=\"slowest\"><thead><tr><th>#</th><th>command</th><th>elapsed ms</th><th>outcome</th>"
         "<th>processes</th><th>started</th><th>argv</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < trees.size(); ++i) {
    const model::ProcessInfo* process = top_process(trees[i]);
    if (process == nullptr) {
      continue;
    }
    out += "<tr><td class=\"num\"><a href=\"#tree-" + std::to_string(i + 1) + "\">" + std::to_string(i + 1) +
           "</a></td><td>";
    append_html_escaped(out, process_name(*process));
    out += "</td><td class=\"num\">" + format_ms(trees[i].processes.front().elapsed) + "</td><td>";
    append_html_escaped(out, process_outcome(*process));
    out += "</td><td class=\"num\">" + std::to_string(model::count_processes(trees[i])) + "</td><td>";
    append_html_escaped(out, process->start_time.value_or(""));
    out += "</td><td>";
    append_html_escaped(out, join_argv(process->argv));
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
  append_html_escaped(out, process_name(*process));
  out += " &mdash; " + format_ms(tree.processes.front().elapsed) + " ms</h2>\n<p class=\"meta\">";
  append_html_escaped(out, join_argv(process->argv));
  out += " &middot; ";
  append_html_escaped(out, process_outcome(*process));
  out += " &middot; started ";
  append_html_escaped(out, process->start_time.value_or("?"));
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
  out += "</p>\n<h2>Commands</h2>\n";
  append_result_table(out, report.command_stats, "stats", "No sessions in this window.");
  out += "<h2 id=\"failed\">Failed runs</h2>\n";
  if (!report.failed_runs.rows.empty()) {
    out += "<p class=\"meta\">The latest " + std::to_string(report.failed_runs.rows.size()) +
           ": a non-zero exit code, a signal, or never finished (incomplete).</p>\n";
  }
  append_result_table(out, report.failed_runs, "failed", "No failed runs in this window.");
  out += "<h2>Slowest process trees</h2>\n";
  if (report.trees.empty()) {
    out += "<p class=\"meta\">No finished sessions in this window.</p>\n";
  } else {
    append_tree_list(out, report.trees);
    out += "<p class=\"legend\"><span><i style=\"background:#4e79a7\"></i>process</span>"
           "<span><i style=\"background:#f28e2b\"></i>child process (child_start to child_exit)</span>"
           "<span><i style=\"background:#a0cbe8\"></i>thread</span>"
           "<span><i style=\"background:#8cd17d\"></i>region (colour by category)</span>"
           "<span>hover a bar for details</span></p>\n";
  }
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
