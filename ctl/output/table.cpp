#include "ctl/output/table.hpp"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "ctl/output/unsafe_text.hpp"
#include "proto/utf8.hpp"

namespace trace2d::ctl {
namespace {

constexpr std::string_view k_gap = "  ";
constexpr std::string_view k_ellipsis = "...";

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

bool is_numeric(const Value& value) {
  return std::holds_alternative<std::int64_t>(value) || std::holds_alternative<double>(value);
}

// A column is right-aligned when it holds numbers and nothing but (NULLs aside).
bool numeric_column(const ResultSet& result, std::size_t column) {
  bool any = false;
  for (const Row& row : result.rows) {
    const Value& value = row[column];
    if (std::holds_alternative<Null>(value)) {
      continue;
    }
    if (!is_numeric(value)) {
      return false;
    }
    any = true;
  }
  return any;
}

std::size_t limit_for(const TableStyle& style, const std::string& column) {
  for (const ColumnLimit& limit : style.limits) {
    if (limit.column == column) {
      return limit.max_chars;
    }
  }
  return 0;
}

// Appends `text` padded to `width`. Returns where the text ends, so the
// caller can drop the padding of empty trailing cells.
std::size_t append_padded(std::string& line, const std::string& text, std::size_t width,
                          bool right) {
  const std::size_t pad = width - std::min(width, display_width(text));
  if (right) {
    line.append(pad, ' ');
  }
  line += text;
  const std::size_t end = line.size();
  if (!right) {
    line.append(pad, ' ');
  }
  return end;
}

}  // namespace

std::string escape_for_terminal(std::string_view text) {
  std::string repaired;
  std::string_view source = text;
  if (!proto::is_valid_utf8(text)) {
    repaired = proto::repair_utf8(text);
    source = repaired;
  }
  std::string out;
  out.reserve(source.size());
  append_with_unsafe_replaced(out, source, [](std::string& to, char32_t c) {
    switch (c) {
      case '\n': to += "\\n"; return;
      case '\t': to += "\\t"; return;
      case '\r': to += "\\r"; return;
      default: break;
    }
    if (c < 0x80) {
      static constexpr char k_hex[] = "0123456789abcdef";
      to += "\\x";
      to.push_back(k_hex[c >> 4]);
      to.push_back(k_hex[c & 0xF]);
      return;
    }
    append_visible_escape(to, c);
  });
  return out;
}

std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(),
                                                [](char c) { return !is_continuation(c); }));
}

std::string truncate_text(std::string_view text, std::size_t max_chars) {
  if (display_width(text) <= max_chars) {
    return std::string(text);
  }
  const std::size_t keep = max_chars > k_ellipsis.size() ? max_chars - k_ellipsis.size() : 0;
  std::size_t chars = 0;
  std::size_t end = 0;
  // Stop at the start of character number `keep`, never inside one.
  for (; end < text.size(); ++end) {
    if (!is_continuation(text[end]) && chars++ == keep) {
      break;
    }
  }
  return std::string(text.substr(0, end)) + std::string(k_ellipsis);
}

std::string cell_text(const Value& value) {
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
          return escape_for_terminal(v);
        } else {
          return "x'" + hex_encode(v.bytes) + "'";
        }
      },
      value);
}

void print_table(std::ostream& out, const ResultSet& result, const TableStyle& style) {
  const std::size_t columns = result.columns.size();
  std::vector<std::vector<std::string>> cells;
  cells.reserve(result.rows.size());
  std::vector<std::size_t> widths(columns);
  std::vector<bool> right(columns);
  for (std::size_t c = 0; c < columns; ++c) {
    widths[c] = display_width(escape_for_terminal(result.columns[c]));
    right[c] = numeric_column(result, c);
  }
  for (const Row& row : result.rows) {
    std::vector<std::string>& line = cells.emplace_back();
    for (std::size_t c = 0; c < columns; ++c) {
      std::string text = cell_text(row[c]);
      if (const std::size_t limit = limit_for(style, result.columns[c]); limit > 0) {
        text = truncate_text(text, limit);
      }
      widths[c] = std::max(widths[c], display_width(text));
      line.push_back(std::move(text));
    }
  }
  const auto write_line = [&](const auto& text_of, bool red = false) {
    std::string line;
    std::size_t end = 0;
    for (std::size_t c = 0; c < columns; ++c) {
      if (c > 0) {
        line += k_gap;
      }
      const std::string text = text_of(c);
      const std::size_t text_end = append_padded(line, text, widths[c], right[c]);
      if (!text.empty()) {
        end = text_end;
      }
    }
    line.resize(end);
    if (red) {
      out << k_red << line << k_normal << '\n';
    } else {
      out << line << '\n';
    }
  };
  write_line([&](std::size_t c) { return escape_for_terminal(result.columns[c]); });
  write_line([&](std::size_t c) { return std::string(widths[c], '-'); });
  for (std::size_t r = 0; r < cells.size(); ++r) {
    const bool red = style.colour && style.alert && style.alert(result.rows[r]);
    write_line([&](std::size_t c) { return cells[r][c]; }, red);
  }
}

void print_record(std::ostream& out, const std::vector<std::string>& columns, const Row& row) {
  for (std::size_t c = 0; c < columns.size() && c < row.size(); ++c) {
    out << escape_for_terminal(columns[c]) << ':';
    const std::string text = cell_text(row[c]);
    if (!text.empty()) {
      out << ' ' << text;
    }
    out << '\n';
  }
}

}  // namespace trace2d::ctl
