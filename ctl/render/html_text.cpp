#include "ctl/render/html_text.hpp"

#include "ctl/output/unsafe_text.hpp"
#include "proto/utf8.hpp"

namespace trace2d::ctl::render {

void append_html_escaped(std::string& out, std::string_view text) {
  std::string repaired;
  if (!proto::is_valid_utf8(text)) {
    repaired = proto::repair_utf8(text);
    text = repaired;
  }
  std::size_t plain = 0;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const char* entity = nullptr;
    switch (c) {
      case '&': entity = "&amp;"; break;
      case '<': entity = "&lt;"; break;
      case '>': entity = "&gt;"; break;
      case '"': entity = "&quot;"; break;
      case '\'': entity = "&#39;"; break;
      default: break;
    }
    char32_t code_point = 0;
    std::size_t length = entity != nullptr ? 1 : 0;
    if (entity == nullptr && c != '\n' && c != '\t') {
      length = unsafe_character_at(text, i, code_point);
    }
    if (length == 0) {
      ++i;
      continue;
    }
    out.append(text.substr(plain, i - plain));
    if (entity != nullptr) {
      out += entity;
    } else {
      // Shown, not obeyed: a bidi override or a zero-width space in a label
      // would otherwise reorder or hide the report's text, and XML 1.0
      // forbids most controls even as references.
      append_visible_escape(out, code_point);
    }
    i += length;
    plain = i;
  }
  out.append(text.substr(plain));
}

std::string html_escaped(std::string_view text) {
  std::string out;
  append_html_escaped(out, text);
  return out;
}

}  // namespace trace2d::ctl::render
