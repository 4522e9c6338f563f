#include "ctl/output/delimited.hpp"

#include <type_traits>
#include <variant>

#include "ctl/output/unsafe_text.hpp"
#include "proto/utf8.hpp"

namespace trace2d::ctl {
namespace {

std::string plain_text(const Value& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Null>) {
          return {};
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return format_real(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return proto::is_valid_utf8(v) ? v : proto::repair_utf8(v);  // unsafe characters: in append_*_field
        } else {
          return hex_encode(v.bytes);
        }
      },
      value);
}

// CSV has no escapes: a newline stays in a quoted field, as RFC 4180 has
// it, and so does a tab; the other unsafe characters
// (ctl/output/unsafe_text.hpp) become the text \u202e, \u001b, \u000d (a
// carriage return would let a value overwrite the line shown before it; a
// backslash in the data is not doubled: JSON is the lossless format).
void append_csv_field(std::string& line, const std::string& raw) {
  std::string text;
  text.reserve(raw.size());
  append_with_unsafe_replaced(text, raw, [](std::string& to, char32_t c) {
    if (c == '\n' || c == '\t') {
      to.push_back(static_cast<char>(c));
    } else {
      append_visible_escape(to, c);
    }
  });
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    line += text;
    return;
  }
  line.push_back('"');
  for (const char c : text) {
    if (c == '"') {
      line.push_back('"');
    }
    line.push_back(c);
  }
  line.push_back('"');
}

// TSV escapes its backslash, so \u202e in the output is unambiguous.
void append_tsv_field(std::string& line, const std::string& text) {
  std::size_t plain = 0;
  for (std::size_t i = 0; i < text.size();) {
    char32_t code_point = 0;
    const std::size_t length = text[i] == '\\' ? 1 : unsafe_character_at(text, i, code_point);
    if (length == 0) {
      ++i;
      continue;
    }
    line.append(text, plain, i - plain);
    switch (text[i] == '\\' ? U'\\' : code_point) {
      case '\t': line += "\\t"; break;
      case '\n': line += "\\n"; break;
      case '\r': line += "\\r"; break;
      case '\\': line += "\\\\"; break;
      default: append_visible_escape(line, code_point); break;
    }
    i += length;
    plain = i;
  }
  line.append(text, plain);
}

}  // namespace

void print_delimited(std::ostream& out, const ResultSet& result, Delimiter delimiter, Header header) {
  const char separator = delimiter == Delimiter::csv ? ',' : '\t';
  const auto append = [delimiter](std::string& line, const std::string& text) {
    delimiter == Delimiter::csv ? append_csv_field(line, text) : append_tsv_field(line, text);
  };
  std::string text;
  if (header == Header::print) {
    for (std::size_t c = 0; c < result.columns.size(); ++c) {
      if (c > 0) {
        text.push_back(separator);
      }
      append(text, result.columns[c]);
    }
    text.push_back('\n');
  }
  for (const Row& row : result.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) {
        text.push_back(separator);
      }
      append(text, plain_text(row[c]));
    }
    text.push_back('\n');
  }
  out << text;
}

}  // namespace trace2d::ctl
