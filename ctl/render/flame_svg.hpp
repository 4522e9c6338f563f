#pragma once
// A flame chart (see flame_layout.hpp) as inline SVG: a time axis, one
// <g class="bar KIND"> per node holding a <title> (the tooltip), a <rect>
// and, when it fits, a <text> label. Each <g> carries data-name (the label
// in full) and data-start-ms/data-elapsed-ms, for tests and scripts.

#include <cstddef>
#include <string>
#include <string_view>

#include "ctl/render/flame_layout.hpp"

namespace trace2d::ctl::render {

void append_flame_svg(std::string& out, const FlameLayout& layout);

// The colours the chart's bars use: processes, child processes, threads,
// and one entry per region category drawn (at most `max_categories`, the
// rest counted), as an HTML list of class "legend".
void append_flame_legend(std::string& out, const FlameLayout& layout, std::size_t max_categories = 24);

// The colour of a region category's bars: the same in every chart (a hash,
// so different categories may share one; the legend names them).
[[nodiscard]] std::string_view region_colour(const std::string& category);

// The colours of the other kinds, as the page's style sheet draws them.
inline constexpr std::string_view k_process_colour = "#4e79a7";
inline constexpr std::string_view k_child_colour = "#f28e2b";
inline constexpr std::string_view k_thread_colour = "#a0cbe8";

}  // namespace trace2d::ctl::render
