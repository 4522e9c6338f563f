#include "proto/json_quote.hpp"

namespace trace2d::proto {

void append_json_quoted(std::string& out, std::string_view text) {
  static constexpr char k_hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t plain = 0;  // start of the run of bytes that need no escape
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') {
      continue;
    }
    out.append(text.substr(plain, i - plain));
    plain = i + 1;
    out.push_back('\\');
    switch (c) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '\b': out.push_back('b'); break;
      case '\t': out.push_back('t'); break;
      case '\n': out.push_back('n'); break;
      case '\f': out.push_back('f'); break;
      case '\r': out.push_back('r'); break;
      default:
        out.append("u00");
        out.push_back(k_hex[c >> 4]);
        out.push_back(k_hex[c & 0xF]);
        break;
    }
  }
  out.append(text.substr(plain));
  out.push_back('"');
}

std::string json_quoted(std::string_view text) {
  std::string out;
  append_json_quoted(out, text);
  return out;
}

}  // namespace trace2d::proto
