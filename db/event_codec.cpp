#include "db/event_codec.hpp"

#include <array>
#include <charconv>

namespace trace2d::db {
namespace {

void append_integer(std::string& out, std::int64_t n) {
  std::array<char, 24> digits{};
  out.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), n).ptr);
}

void append_key(std::string& out, std::string_view name) {
  out += ",\"";
  out += name;
  out += "\":";
}

// printf('%d.%06d', us / 1000000, us % 1000000), as the view writes it:
// %06d is six wide with the sign, zeros after it (-5 is "-00005").
void append_micros(std::string& out, std::int64_t us) {
  append_integer(out, us / 1000000);
  out += '.';
  const std::int64_t fraction = us % 1000000;
  std::array<char, 24> digits{};
  std::string_view text(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), fraction).ptr);
  std::size_t width = 6;
  if (fraction < 0) {
    out += '-';
    text.remove_prefix(1);
    --width;
  }
  out.append(text.size() < width ? width - text.size() : 0, '0');
  out += text;
}

}  // namespace

void append_sqlite_json_quoted(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c <= 0x1f) {
      static constexpr std::array<char, 32> k_special = {0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r'};
      if (k_special[c] != 0) {
        out += '\\';
        out += k_special[c];
      } else {
        static constexpr std::string_view k_hex = "0123456789abcdef";
        out += "\\u00";
        out += k_hex[c >> 4];
        out += k_hex[c & 0xf];
      }
    } else {
      out += ch;
    }
  }
  out += '"';
}

void append_stored_event_object(std::string& out, const StoredEventParts& parts) {
  if (!parts.body.empty() && parts.body.front() == '{') {
    out += parts.body;
    return;
  }
  const std::size_t open = out.size();
  out += '{';
  if (parts.repo) {
    append_key(out, "repo");
    append_integer(out, *parts.repo);
  }
  if (parts.t_abs_us) {
    append_key(out, "t_abs");
    append_micros(out, *parts.t_abs_us);
  }
  if (parts.t_rel_us) {
    append_key(out, "t_rel");
    append_micros(out, *parts.t_rel_us);
  }
  if (parts.nesting) {
    append_key(out, "nesting");
    append_integer(out, *parts.nesting);
  }
  if (parts.category) {
    append_key(out, "category");
    append_sqlite_json_quoted(out, *parts.category);
  }
  if (parts.label) {
    append_key(out, "label");
    append_sqlite_json_quoted(out, *parts.label);
  }
  out += parts.body;
  if (out.size() > open + 1) {
    out.erase(open + 1, 1);  // the first member's comma
  }
  out += '}';
}

}  // namespace trace2d::db
