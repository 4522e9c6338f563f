#include "ctl/render/report_sections.hpp"

#include <cmath>
#include <cstdio>

#include "ctl/render/html_text.hpp"

namespace trace2d::ctl::render {
namespace {

// What a title attribute holds of a text at most: hovering shows it all
// for any real command line, and a hostile one costs the page little.
constexpr std::size_t k_title_chars = 2000;
constexpr std::size_t k_command_line_chars = 160;
constexpr std::size_t k_name_chars = 60;
constexpr std::size_t k_reason_chars = 200;

// The first `max_chars` characters of UTF-8 `text` (whole code points).
std::string_view utf8_prefix(std::string_view text, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (chars == max_chars) {
        return text.substr(0, i);
      }
      ++chars;
    }
  }
  return text;
}

std::string count_text(std::int64_t n) {
  return n == 0 ? std::string() : std::to_string(n);
}

void append_number_cell(std::string& out, const std::string& text, std::string_view css = "num") {
  out += "<td class=\"";
  out += css;
  out += "\">";
  append_html_escaped(out, text);
  out += "</td>";
}

void append_more(std::string& out, std::size_t more, std::string_view what, std::string_view where) {
  if (more == 0) {
    return;
  }
  out += "<p class=\"meta more\">" + std::to_string(more) + " more ";
  out += what;
  out += " are not shown (";
  out += where;
  out += " lists them).</p>\n";
}

void append_summary_table(std::string& out, const Summary& summary, std::string_view css_class,
                          std::string_view name_header, bool with_incomplete) {
  out += "<table class=\"";
  out += css_class;
  out += "\"><thead><tr><th>";
  out += name_header;
  out += "</th><th class=\"num\">Runs</th><th class=\"num\">Failed</th>";
  if (with_incomplete) {
    out += "<th class=\"num\" title=\"never sent their exit: killed, or still running\">Incomplete</th>";
  }
  out += "<th class=\"num\">Median</th><th class=\"num\">p90</th><th class=\"num\">Slowest</th>"
         "<th class=\"num\">Total</th></tr></thead><tbody>\n";
  for (const SummaryRow& row : summary.rows) {
    out += "<tr><td>";
    if (!row.full_name.empty() && row.full_name != row.name) {
      out += "<span title=\"";
      append_html_escaped(out, utf8_prefix(row.full_name, k_title_chars));
      out += "\">";
      append_html_escaped(out, utf8_prefix(row.name, k_name_chars));
      out += "</span>";
    } else {
      append_cut_text(out, row.name, k_name_chars);
    }
    out += "</td>";
    append_number_cell(out, std::to_string(row.runs));
    append_number_cell(out, count_text(row.failed), row.failed > 0 ? "num bad" : "num");
    if (with_incomplete) {
      append_number_cell(out, count_text(row.incomplete));
    }
    append_number_cell(out, human_duration(row.median));
    append_number_cell(out, human_duration(row.p90));
    append_number_cell(out, human_duration(row.slowest));
    append_number_cell(out, human_duration(row.total));
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
}

std::string percent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.0f%%", ratio * 100);
  return text;
}

std::string p_value(double p) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", p);
  return text;
}

}  // namespace

void append_cut_text(std::string& out, std::string_view text, std::size_t max_chars) {
  const std::string_view shown = utf8_prefix(text, max_chars);
  if (shown.size() == text.size()) {
    append_html_escaped(out, text);
    return;
  }
  out += "<span class=\"cut\" title=\"";
  append_html_escaped(out, utf8_prefix(text, k_title_chars));
  out += "\">";
  append_html_escaped(out, shown);
  out += "\xE2\x80\xA6</span>";
}

std::string human_duration(std::optional<double> seconds, bool signed_value) {
  if (!seconds || !std::isfinite(*seconds)) {
    return {};
  }
  const double value = *seconds;
  const double magnitude = std::fabs(value);
  const char* sign = !signed_value ? (value < 0 ? "-" : "") : (value < 0 ? "-" : "+");
  const double ms = magnitude * 1000;
  char text[64];
  if (ms < 1) {
    std::snprintf(text, sizeof text, "%s%.2f ms", sign, ms);
  } else if (ms < 10) {
    std::snprintf(text, sizeof text, "%s%.1f ms", sign, ms);
  } else if (ms < 1000) {
    std::snprintf(text, sizeof text, "%s%.0f ms", sign, ms);
  } else if (magnitude < 10) {
    std::snprintf(text, sizeof text, "%s%.2f s", sign, magnitude);
  } else if (magnitude < 100) {
    std::snprintf(text, sizeof text, "%s%.1f s", sign, magnitude);
  } else if (magnitude < 600) {
    std::snprintf(text, sizeof text, "%s%.0f s", sign, magnitude);
  } else if (magnitude < 3 * 3600) {
    std::snprintf(text, sizeof text, "%s%.0f min", sign, magnitude / 60);
  } else {
    std::snprintf(text, sizeof text, "%s%.1f h", sign, magnitude / 3600);
  }
  return text;
}

void append_command_summary(std::string& out, const HtmlReport& report) {
  out += "<section id=\"commands\"><h2>Commands</h2>\n<p class=\"meta\">";
  out += report.all_processes
             ? "Every git process, also those git ran for another (<code>--all</code>)."
             : "The commands you ran, by the name you typed (an alias as itself); the processes git ran for them are "
               "in their trees below (<code>--all</code> lists them here too).";
  out += " Times are each run's whole elapsed time.</p>\n";
  if (report.commands.rows.empty()) {
    out += "<p class=\"meta\">No sessions in this window.</p>\n";
  } else {
    append_summary_table(out, report.commands, "stats", "Command", true);
    append_more(out, report.commands.more, "commands", "<code>trace2ctl stats</code>");
  }
  out += "</section>\n";
}

void append_repository_summary(std::string& out, const Summary& repositories) {
  out += "<section id=\"repositories\"><h2>Repositories</h2>\n";
  if (repositories.rows.empty()) {
    out += "<p class=\"meta\">No sessions in this window.</p>\n";
  } else {
    out += "<p class=\"meta\">Per repository: its nickname, else its worktree (hover for the whole path); "
           "<code>-</code> for commands run outside one.</p>\n";
    append_summary_table(out, repositories, "repositories", "Repository", false);
    append_more(out, repositories.more, "repositories", "<code>trace2ctl stats --by repo</code>");
  }
  out += "</section>\n";
}

void append_failed_runs(std::string& out, const std::vector<FailedRun>& failed) {
  out += "<section id=\"failed-runs\"><h2 id=\"failed\">Failed runs</h2>\n";
  if (failed.empty()) {
    out += "<p class=\"meta\">No failed runs in this window.</p>\n</section>\n";
    return;
  }
  out += "<p class=\"meta\">The latest " + std::to_string(failed.size()) +
         ": a non-zero exit code, a signal, or never finished (incomplete); the reason is git's first error "
         "message, else how it ended. Each links to its process tree.</p>\n";
  out += "<table class=\"failed\"><thead><tr><th>Started</th><th>Command</th><th>Reason</th>"
         "<th class=\"num\">Took</th><th>Command line</th><th>Tree</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < failed.size(); ++i) {
    const FailedRun& run = failed[i];
    const std::string anchor = "failed-" + std::to_string(i + 1);
    out += "<tr><td><span class=\"time\">";
    append_html_escaped(out, run.started);
    out += "</span></td><td>";
    append_cut_text(out, run.command, k_name_chars);
    out += "</td><td class=\"reason\">";
    append_cut_text(out, run.reason, k_reason_chars);
    out += "</td>";
    append_number_cell(out, human_duration(run.elapsed));
    out += "<td class=\"argv\">";
    append_cut_text(out, run.command_line, k_command_line_chars);
    out += "</td><td><a href=\"#" + anchor + "\">tree</a>";
    if (run.flame_chart) {
      out += " &middot; <a href=\"#tree-" + std::to_string(*run.flame_chart) + "\">chart</a>";
    }
    out += "</td></tr>\n";
  }
  out += "</tbody></table>\n<div class=\"failed-trees\">\n";
  for (std::size_t i = 0; i < failed.size(); ++i) {
    const FailedRun& run = failed[i];
    out += "<details class=\"failed-tree\" id=\"failed-" + std::to_string(i + 1) + "\" data-sid=\"";
    append_html_escaped(out, run.sid);
    out += "\"><summary>" + std::to_string(i + 1) + ". ";
    append_cut_text(out, run.command, k_name_chars);
    out += " &mdash; ";
    append_cut_text(out, run.reason, k_reason_chars);
    out += " <span class=\"meta\">sid <code>";
    append_html_escaped(out, run.sid);
    out += "</code></span></summary>\n";
    if (!run.tree_text.empty()) {
      out += "<pre class=\"tree-text\">";
      append_html_escaped(out, run.tree_text);
      out += "</pre>\n";
    }
    if (!run.tree_note.empty()) {
      out += "<p class=\"meta\">";
      append_html_escaped(out, run.tree_note);
      out += "</p>\n";
    }
    out += "</details>\n";
  }
  out += "</div>\n</section>\n";
}

void append_regressions(std::string& out, const Regressions& r) {
  out += "<section id=\"regressions\"><h2>Regressions</h2>\n<p class=\"meta\">";
  out += "What got slower or faster, as <code>trace2ctl compare</code> answers: the last 7 days (";
  append_html_escaped(out, r.target);
  out += ", " + std::to_string(r.target_runs) + " runs) against the 28 days before (";
  append_html_escaped(out, r.baseline);
  out += ", " + std::to_string(r.baseline_runs) + " runs), successful runs only. ";
  append_html_escaped(out, r.method);
  out += "</p>\n";
  if (!r.problem.empty()) {
    out += "<p class=\"verdict\">The comparison could not be made: ";
    append_html_escaped(out, r.problem);
    out += "</p>\n</section>\n";
    return;
  }
  if (r.commands_tested == 0) {
    out += "<p class=\"verdict not-enough\">Not enough data to say what got slower: no command has " +
           std::to_string(r.min_runs) + " successful runs in both periods" +
           (r.commands_too_few == 1   ? std::string(" (1 command has fewer)")
            : r.commands_too_few > 1 ? " (" + std::to_string(r.commands_too_few) + " commands have fewer)"
                                     : std::string()) +
           ".</p>\n</section>\n";
    return;
  }
  if (r.rows.empty()) {
    out += "<p class=\"verdict\">No command got slower or faster: " + std::to_string(r.commands_tested) +
           (r.commands_tested == 1 ? " command" : " commands") + " compared";
    if (r.commands_too_few > 0) {
      out += ", " + std::to_string(r.commands_too_few) + " with too few runs to tell";
    }
    out += ".</p>\n</section>\n";
    return;
  }
  out += "<p class=\"verdict\">" + std::to_string(r.commands_tested) +
         (r.commands_tested == 1 ? " command" : " commands") + " compared";
  if (r.commands_too_few > 0) {
    out += ", " + std::to_string(r.commands_too_few) + " with too few runs to tell";
  }
  out += "; what changed:</p>\n";
  out += "<table class=\"regressions\"><thead><tr><th>Command</th><th>Where</th><th class=\"num\">Runs before</th>"
         "<th class=\"num\">Runs now</th><th class=\"num\">Median before</th><th class=\"num\">Median now</th>"
         "<th class=\"num\">Change</th><th class=\"num\" title=\"the interval the change lies in, at the test's "
         "confidence\">Between</th><th class=\"num\" title=\"adjusted for the number of rows tested\">p</th>"
         "</tr></thead><tbody>\n";
  for (const RegressionRow& row : r.rows) {
    out += row.slower ? "<tr class=\"slower\"><td>" : "<tr class=\"faster\"><td>";
    append_cut_text(out, row.command, k_name_chars);
    out += "</td><td>";
    if (row.part.empty()) {
      out += "whole run";
    } else {
      append_cut_text(out, row.part, k_name_chars);
    }
    out += "</td>";
    append_number_cell(out, std::to_string(row.baseline_runs));
    append_number_cell(out, std::to_string(row.target_runs));
    append_number_cell(out, human_duration(row.baseline_median));
    append_number_cell(out, human_duration(row.target_median));
    std::string change = human_duration(row.change, true);
    if (row.change_ratio) {
      change += " (" + percent(*row.change_ratio) + ")";
    }
    append_number_cell(out, change, row.slower ? "num bad" : "num good");
    std::string between;
    if (row.change_low && row.change_high) {
      between = human_duration(row.change_low, true) + " .. " + human_duration(row.change_high, true);
    }
    append_number_cell(out, between);
    append_number_cell(out, p_value(row.p_adjusted));
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  append_more(out, r.more, "rows", "<code>trace2ctl compare</code>");
  out += "</section>\n";
}

void append_advice(std::string& out, const Advice& advice) {
  out += "<section id=\"advice\"><h2>Advice</h2>\n<p class=\"meta\">What <code>trace2ctl advice</code> finds ";
  append_html_escaped(out, advice.window);
  out += ": each finding with its evidence and the command that fixes it.</p>\n";
  if (!advice.problem.empty()) {
    out += "<p class=\"verdict\">The rules could not run: ";
    append_html_escaped(out, advice.problem);
    out += "</p>\n</section>\n";
    return;
  }
  if (advice.items.empty()) {
    out += "<p class=\"verdict\">No advice: no rule found enough evidence in this window.</p>\n</section>\n";
    return;
  }
  for (const AdviceItem& item : advice.items) {
    out += "<div class=\"finding\" data-rule=\"";
    append_html_escaped(out, item.rule);
    out += "\"><p class=\"what\">";
    append_cut_text(out, item.finding, 400);
    out += "</p>\n<p class=\"evidence\">";
    append_cut_text(out, item.evidence, 600);
    out += "</p>\n<p class=\"fix\">Fix: <code>";
    append_cut_text(out, item.fix, 400);
    out += "</code></p>\n";
    if (!item.cannot_see.empty()) {
      out += "<p class=\"meta\">";
      append_cut_text(out, item.cannot_see, 400);
      out += "</p>\n";
    }
    if (!item.sids.empty()) {
      out += "<p class=\"meta\">Runs: ";
      for (std::size_t i = 0; i < item.sids.size(); ++i) {
        out += i > 0 ? ", <code>" : "<code>";
        append_cut_text(out, item.sids[i], 80);
        out += "</code>";
      }
      out += "</p>\n";
    }
    out += "</div>\n";
  }
  append_more(out, advice.more, "findings", "<code>trace2ctl advice</code>");
  out += "</section>\n";
}

}  // namespace trace2d::ctl::render
