#include "otlp/receiver_json.hpp"

#include <array>
#include <cstdint>

namespace trace2d::otlp {
namespace {

// The length of the well-formed UTF-8 sequence at `at` (Unicode's table:
// no overlong forms, no surrogates, nothing past U+10FFFF), 0 when it is
// not one: Go's utf8.DecodeRuneInString then gives RuneError, size 1.
std::size_t sequence_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) -> unsigned {
    return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0U;
  };
  const unsigned lead = byte(0);
  const auto continuation = [&](std::size_t i, unsigned low = 0x80, unsigned high = 0xBF) {
    const unsigned b = byte(i);
    return at + i < text.size() && b >= low && b <= high;
  };
  if (lead >= 0xC2 && lead <= 0xDF) {
    return continuation(1) ? 2 : 0;
  }
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned low = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(1, low, high) && continuation(2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned low = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(1, low, high) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

void append_go_json_string(std::string& out, std::string_view text) {
  static constexpr std::string_view k_hex = "0123456789abcdef";
  out += '"';
  out.reserve(out.size() + text.size() + 1);
  // Printable ASCII that Go writes as it is goes in runs: byte by byte, the
  // appends were a twentieth of the exporter's time (argv, ancestry, sets).
  const auto plain = [](unsigned char c) {
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (plain(c)) {
      std::size_t end = i + 1;
      while (end < text.size() && plain(static_cast<unsigned char>(text[end]))) {
        ++end;
      }
      out.append(text.data() + i, end - i);
      i = end;
      continue;
    }
    if (c < 0x80) {
      switch (c) {
        case '"':
        case '\\':
          out += '\\';
          out += static_cast<char>(c);
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            out += "\\u00";
            out += k_hex[c >> 4];
            out += k_hex[c & 0xF];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const std::size_t length = sequence_length(text, i);
    if (length == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8, E2 80 A9): line separators to JavaScript.
    if (length == 3 && c == 0xE2 && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(text[i + 2]) & 0xFE) == 0xA8) {
      out += static_cast<unsigned char>(text[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  out += '"';
}

std::string go_json_string_array(const std::vector<std::string>& items) {
  std::size_t size = 2;
  for (const std::string& item : items) {
    size += item.size() + 3;
  }
  std::string out;
  out.reserve(size);
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      out += ',';
    }
    append_go_json_string(out, items[i]);
  }
  out += ']';
  return out;
}

std::string go_json_object(const std::map<std::string, std::string>& values) {
  std::string out = "{";
  for (const auto& [key, value] : values) {
    if (out.size() > 1) {
      out += ',';
    }
    append_go_json_string(out, key);
    out += ':';
    out += value;
  }
  out += '}';
  return out;
}

std::string go_json_nested(const NestedJson& values) {
  std::string out = "{";
  for (const auto& [outer, inner] : values) {
    if (out.size() > 1) {
      out += ',';
    }
    append_go_json_string(out, outer);
    out += ':';
    out += go_json_object(inner);
  }
  out += '}';
  return out;
}

}  // namespace trace2d::otlp
