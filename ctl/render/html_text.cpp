#include "ctl/render/html_text.hpp"

#include "proto/utf8.hpp"

namespace trace2d::ctl::render {

void append_html_escaped(std::string& out, std::string_view text) {
  std::string repaired;
  if (!proto::is_valid_utf8(text)) {
    repaired = proto::repair_utf8(text);
    text = repaired;
  }
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\n':
      case '\t': out.push_back(c); break;
      default:
        // XML 1.0 forbids most control characters even as references.
        out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? std::string("\xEF\xBF\xBD") : std::string(1, c);
        break;
    }
  }
}

std::string html_escaped(std::string_view text) {
  std::string out;
  append_html_escaped(out, text);
  return out;
}

}  // namespace trace2d::ctl::render
