#include "ctl/render/flame_svg.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>

#include "ctl/render/describe.hpp"
#include "ctl/render/html_text.hpp"

namespace trace2d::ctl::render {
namespace {

constexpr double k_chart_width = 1160;  // px of time axis
constexpr double k_margin = 10;
constexpr double k_axis_height = 22;
constexpr double k_row_height = 18;
constexpr double k_bar_height = 16;
constexpr double k_min_label_width = 24;

// Regions take their colour from their category, the same in every chart.
constexpr std::array<std::string_view, 12> k_region_colours{
    "#8cd17d", "#f1ce63", "#86bcb6", "#ff9d9a", "#bab0ac", "#fabfd2",
    "#d4a6c8", "#d7b5a6", "#b6992d", "#9fc6e7", "#ffbe7d", "#c9d7a4"};

const char* kind_class(BarKind kind) {
  switch (kind) {
    case BarKind::process: return "process";
    case BarKind::child: return "child";
    case BarKind::thread: return "thread";
    case BarKind::region: break;
  }
  return "region";
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

// A tick step of 1, 2 or 5 times a power of ten giving at most ~10 ticks.
double tick_step(double span_ms) {
  const double raw = span_ms / 10;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * power >= raw) {
      return factor * power;
    }
  }
  return 10 * power;
}

// An upper bound of the advance width, in pixels, of a byte of UTF-8 text
// in the charts' font (DejaVu Sans at 11 px, html_report.cpp): a label
// placed by these estimates never runs past its bar or the chart, whatever
// the glyphs (an average width did: digits, 'q' and "ms" are wider than
// it, and a tick label near the right edge crossed it). A continuation
// byte adds nothing; a character outside ASCII counts as the widest.
double glyph_width(unsigned char c) {
  if ((c & 0xC0) == 0x80) {
    return 0;
  }
  if (c >= 0x80) {
    return 12.0;
  }
  switch (c) {
    case 'm': case 'W': case '%': case '@': case '#': case '&': case '~': case '=': case '+': case '<': case '>':
      return 11.0;
    case 'w':
      return 9.2;
    case ' ': case '.': case ',': case ':': case ';': case '\'': case '!': case '|': case 'i': case 'j': case 'l':
    case 'I': case 'f': case 't': case 'r': case '(': case ')': case '[': case ']':
      return 5.0;
    default:
      break;
  }
  if (c >= 'A' && c <= 'Z') {
    return 9.6;
  }
  return 7.2;  // the other letters, digits and signs: at most 7.0 px
}

// Process bars' labels are bold: about a tenth wider.
constexpr double k_bold_factor = 1.1;
constexpr double k_ellipsis_width = 11.0;

double text_width(std::string_view text, bool bold) {
  double width = 0;
  for (const char c : text) {
    width += glyph_width(static_cast<unsigned char>(c));
  }
  return bold ? width * k_bold_factor : width;
}

// `label` as it fits a bar `width` pixels wide (3 px of padding each side):
// whole, or cut between characters with an ellipsis, or nothing on a bar
// too narrow for any.
std::string fit_label(const std::string& label, double width, bool bold) {
  if (width < k_min_label_width) {
    return {};
  }
  const double room = width - 6;
  if (text_width(label, bold) <= room) {
    return label;
  }
  double used = bold ? k_ellipsis_width * k_bold_factor : k_ellipsis_width;
  std::size_t end = 0;
  while (end < label.size()) {
    std::size_t next = end + 1;
    while (next < label.size() && (static_cast<unsigned char>(label[next]) & 0xC0) == 0x80) {
      ++next;  // never end inside a UTF-8 sequence
    }
    const double character = text_width(std::string_view(label).substr(end, next - end), bold);
    if (used + character > room) {
      break;
    }
    used += character;
    end = next;
  }
  return end == 0 ? std::string() : label.substr(0, end) + "\xE2\x80\xA6";
}

// "0 ms", "250 ms", "1.5 s": the unit the step needs.
std::string tick_label(double t_ms, double step_ms) {
  char text[32];
  if (step_ms >= 1000) {
    std::snprintf(text, sizeof text, "%g s", t_ms / 1000);
  } else {
    std::snprintf(text, sizeof text, "%g ms", t_ms);
  }
  return text;
}

void append_axis(std::string& out, double span_ms, double height) {
  if (span_ms <= 0) {
    return;
  }
  const double step = tick_step(span_ms);
  const double right_edge = k_margin + k_chart_width + k_margin;
  out += "<g class=\"axis\">";
  for (int i = 0; i * step <= span_ms * (1 + 1e-9); ++i) {
    const double t = i * step;
    const double x = k_margin + t / span_ms * k_chart_width;
    out += "<line x1=\"" + number(x) + "\" y1=\"" + number(k_axis_height - 4) + "\" x2=\"" + number(x) + "\" y2=\"" +
           number(height) + "\"/>";
    const std::string label = tick_label(t, step);
    // A label that would run past the chart's edge ends at its tick
    // instead: the browser clips what leaves the viewBox ("80 m").
    const bool ends_at_tick = x + 2 + text_width(label, false) > right_edge;
    out += "<text x=\"" + number(ends_at_tick ? x - 2 : x + 2) + "\" y=\"12\"" +
           (ends_at_tick ? " text-anchor=\"end\"" : "") + ">" + label + "</text>";
  }
  out += "</g>";
}

}  // namespace

std::string_view region_colour(const std::string& category) {
  std::uint32_t hash = 2166136261U;  // FNV-1a: stable across runs and builds
  for (const char c : category) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 16777619U;
  }
  return k_region_colours[hash % k_region_colours.size()];
}

void append_flame_legend(std::string& out, const FlameLayout& layout, std::size_t max_categories) {
  bool kinds[4] = {false, false, false, false};
  std::map<std::string, std::size_t> categories;  // by name, with their bars
  for (const Bar& bar : layout.bars) {
    kinds[static_cast<int>(bar.kind)] = true;
    if (bar.kind == BarKind::region) {
      ++categories[bar.category];
    }
  }
  out += "<ul class=\"legend\">";
  const auto item = [&out](std::string_view css, std::string_view colour, const std::string& text) {
    out += "<li class=\"";
    out += css;
    out += "\"><i style=\"background:";
    out += colour;
    out += "\"></i>";
    append_html_escaped(out, text);
    out += "</li>";
  };
  if (kinds[static_cast<int>(BarKind::process)]) {
    item("process", k_process_colour, "git process");
  }
  if (kinds[static_cast<int>(BarKind::child)]) {
    item("child", k_child_colour, "child process (child_start to child_exit)");
  }
  if (kinds[static_cast<int>(BarKind::thread)]) {
    item("thread", k_thread_colour, "thread");
  }
  std::size_t shown = 0;
  for (const auto& [category, bars] : categories) {
    if (shown == max_categories) {
      out += "<li class=\"more\">and " + std::to_string(categories.size() - shown) +
             " more region categories (hover a bar for its name)</li>";
      break;
    }
    item("category", region_colour(category), "region " + (category.empty() ? std::string("(no category)") : category));
    ++shown;
  }
  out += "<li class=\"hint\">hover a bar for its times</li></ul>\n";
}

void append_flame_svg(std::string& out, const FlameLayout& layout) {
  const double span_ms = layout.span * 1000;
  const double height = k_axis_height + layout.rows * k_row_height + k_margin;
  const double width = k_chart_width + 2 * k_margin;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame\" viewBox=\"0 0 " + number(width) + " " +
         number(height) + "\" width=\"" + number(width) + "\" height=\"" + number(height) + "\">";
  append_axis(out, span_ms, height);
  for (const Bar& bar : layout.bars) {
    const double scale = span_ms > 0 ? k_chart_width / layout.span : 0;
    const double x = k_margin + bar.start * scale;
    // At least a pixel, so even a 5 µs region shows where it ran.
    const double w = std::max(1.0, (bar.end - bar.start) * scale);
    const double y = k_axis_height + bar.row * k_row_height;
    out += "<g class=\"bar ";
    out += kind_class(bar.kind);
    out += bar.open ? " open" : "";
    out += "\" data-name=\"";
    append_html_escaped(out, bar.label);
    out += "\" data-start-ms=\"" + format_ms(bar.start) + "\" data-elapsed-ms=\"" + format_ms(bar.end - bar.start) +
           "\"><title>";
    append_html_escaped(out, bar.tooltip);
    out += "</title><rect x=\"" + number(x) + "\" y=\"" + number(y) + "\" width=\"" + number(w) + "\" height=\"" +
           number(k_bar_height) + "\"";
    if (bar.kind == BarKind::region) {
      out += " fill=\"" + std::string(region_colour(bar.category)) + "\"";
    }
    out += "/>";
    if (const std::string label = fit_label(bar.label, w, bar.kind == BarKind::process); !label.empty()) {
      out += "<text x=\"" + number(x + 3) + "\" y=\"" + number(y + 12) + "\">";
      append_html_escaped(out, label);
      out += "</text>";
    }
    out += "</g>\n";
  }
  out += "</svg>";
}

}  // namespace trace2d::ctl::render
