#pragma once
// Text made safe for HTML and SVG, shared by the report's writers.

#include <string>
#include <string_view>

namespace trace2d::ctl::render {

// Escapes & < > " ' and replaces invalid UTF-8 and control characters
// (other than newline and tab), so any stored text is safe in element
// content and in quoted attributes.
void append_html_escaped(std::string& out, std::string_view text);
[[nodiscard]] std::string html_escaped(std::string_view text);

}  // namespace trace2d::ctl::render
