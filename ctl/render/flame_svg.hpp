#pragma once
// A flame chart (see flame_layout.hpp) as inline SVG: a time axis, one
// <g class="bar KIND"> per node holding a <title> (the tooltip), a <rect>
// and, when it fits, a <text> label. Each <g> carries data-name (the label
// in full) and data-start-ms/data-elapsed-ms, for tests and scripts.

#include <string>

#include "ctl/render/flame_layout.hpp"

namespace trace2d::ctl::render {

void append_flame_svg(std::string& out, const FlameLayout& layout);

}  // namespace trace2d::ctl::render
