#pragma once
// Text made safe for HTML and SVG, shared by the report's writers.

#include <string>
#include <string_view>

namespace trace2d::ctl::render {

// Escapes & < > " ', replaces invalid UTF-8, and writes control, bidi and
// invisible characters (other than newline and tab; ctl/output/unsafe_text.hpp)
// as the visible text \u202e, so any stored text is safe in element content
// and in quoted attributes and reads as it is stored.
void append_html_escaped(std::string& out, std::string_view text);
[[nodiscard]] std::string html_escaped(std::string_view text);

}  // namespace trace2d::ctl::render
