#include "ctl/output/json.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <variant>

#include "ctl/output/unsafe_text.hpp"
#include "proto/utf8.hpp"

namespace trace2d::ctl {

void append_json_string(std::string& out, std::string_view text) {
  std::string repaired;
  if (!proto::is_valid_utf8(text)) {
    repaired = proto::repair_utf8(text);
    text = repaired;
  }
  out.push_back('"');
  std::size_t plain = 0;  // start of the run that needs no escape
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    char32_t code_point = 0;
    const std::size_t length = c == '"' || c == '\\' ? 1 : unsafe_character_at(text, i, code_point);
    if (length == 0) {
      ++i;
      continue;
    }
    out.append(text.substr(plain, i - plain));
    switch (c == '"' || c == '\\' ? static_cast<char32_t>(c) : code_point) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default: append_json_escape(out, code_point); break;
    }
    i += length;
    plain = i;
  }
  out.append(text.substr(plain));
  out.push_back('"');
}

void append_json_text(std::string& out, std::string_view json) {
  append_with_unsafe_replaced(out, json, [](std::string& to, char32_t c) {
    if (c < 0x20) {
      to.push_back(static_cast<char>(c));  // whitespace between tokens: valid JSON has no other
    } else {
      append_json_escape(to, c);  // inside a string: valid JSON has them nowhere else
    }
  });
}

void append_json_value(std::string& out, const Value& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Null>) {
          out += "null";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          out += std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          out += std::isfinite(v) ? format_real(v) : std::string("null");
        } else if constexpr (std::is_same_v<T, std::string>) {
          append_json_string(out, v);
        } else {
          out.push_back('"');
          out += hex_encode(v.bytes);
          out.push_back('"');
        }
      },
      value);
}

namespace {

bool is_json(const std::string& text) {
  // A fresh parser per value: argv columns are few and short.
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  return parser.parse(text).get(element) == simdjson::SUCCESS;
}

}  // namespace

void append_json_object(std::string& out, const std::vector<std::string>& columns, const Row& row,
                        const std::vector<std::string>& json_columns) {
  out.push_back('{');
  for (std::size_t c = 0; c < columns.size() && c < row.size(); ++c) {
    if (c > 0) {
      out.push_back(',');
    }
    append_json_string(out, columns[c]);
    out.push_back(':');
    const auto* text = std::get_if<std::string>(&row[c]);
    const bool embed = text != nullptr &&
                       std::find(json_columns.begin(), json_columns.end(), columns[c]) != json_columns.end() &&
                       proto::is_valid_utf8(*text) && is_json(*text);
    if (embed) {
      append_json_text(out, *text);
    } else {
      append_json_value(out, row[c]);
    }
  }
  out.push_back('}');
}

void append_json_array(std::string& out, const ResultSet& result) {
  out.push_back('[');
  for (std::size_t r = 0; r < result.rows.size(); ++r) {
    // One row per line: still one document, but diffable and greppable.
    out += r > 0 ? ",\n" : "\n";
    append_json_object(out, result.columns, result.rows[r], result.json_columns);
  }
  out += result.rows.empty() ? "]" : "\n]";
}

void print_json_array(std::ostream& out, const ResultSet& result) {
  std::string text;
  append_json_array(text, result);
  text.push_back('\n');
  out << text;
}

}  // namespace trace2d::ctl
