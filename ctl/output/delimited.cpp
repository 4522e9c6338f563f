#include "ctl/output/delimited.hpp"

#include <type_traits>
#include <variant>

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
          return proto::is_valid_utf8(v) ? v : proto::repair_utf8(v);
        } else {
          return hex_encode(v.bytes);
        }
      },
      value);
}

void append_csv_field(std::string& line, const std::string& text) {
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

void append_tsv_field(std::string& line, const std::string& text) {
  for (const char c : text) {
    switch (c) {
      case '\t': line += "\\t"; break;
      case '\n': line += "\\n"; break;
      case '\r': line += "\\r"; break;
      case '\\': line += "\\\\"; break;
      default: line.push_back(c); break;
    }
  }
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
