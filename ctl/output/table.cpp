#include "ctl/output/table.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <type_traits>
#include <variant>

#include "ctl/output/display.hpp"
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

// The narrowest column `column` may be cut to; 0: not cuttable.
std::size_t minimum_for(const TableStyle& style, const std::string& column) {
  for (const ColumnLimit& limit : style.limits) {
    if (limit.column == column) {
      return std::max<std::size_t>(limit.min_chars, k_ellipsis.size() + 1);
    }
  }
  return 0;
}

// The decimals of a REAL as format_real() writes it; nullopt for an
// exponent or a non-finite value, which keep their own form.
std::optional<std::size_t> decimals_of(double value) {
  const std::string text = format_real(value);
  if (text.find_first_of("eEnI") != std::string::npos) {
    return std::nullopt;
  }
  const auto dot = text.find('.');
  return dot == std::string::npos ? 0 : text.size() - dot - 1;
}

// One number of decimals per column: the most its REAL values need, at
// most six; nullopt for a column without REALs.
std::optional<std::size_t> column_decimals(const ResultSet& result, std::size_t column) {
  constexpr std::size_t k_most = 6;
  std::optional<std::size_t> decimals;
  for (const Row& row : result.rows) {
    if (const double* value = std::get_if<double>(&row[column])) {
      if (const auto d = decimals_of(*value)) {
        decimals = std::min(k_most, std::max(decimals.value_or(0), *d));
      }
    }
  }
  return decimals;
}

std::string fixed_real(double value, std::size_t decimals) {
  if (!decimals_of(value)) {
    return format_real(value);
  }
  char buf[64];
  const auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, static_cast<int>(decimals));
  return ec == std::errc() ? std::string(buf, end) : format_real(value);
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

std::string table_cell_text(const std::string& column, const Value& value, bool display_times) {
  if (const std::string* text = std::get_if<std::string>(&value); text != nullptr && display_times &&
                                                                   is_time_column(column)) {
    return escape_for_terminal(display_time(*text));
  }
  return cell_text(value);
}

std::vector<std::size_t> fit_widths(std::vector<std::size_t> widths, const std::vector<std::size_t>& cuttable_minimum,
                                    std::size_t line_width) {
  std::size_t total = widths.empty() ? 0 : k_gap.size() * (widths.size() - 1);
  for (const std::size_t w : widths) {
    total += w;
  }
  while (total > line_width) {
    // The widest column that may still give, one character at a time:
    // several long columns end up sharing what is left evenly.
    std::size_t widest = widths.size();
    for (std::size_t c = 0; c < widths.size(); ++c) {
      if (cuttable_minimum[c] > 0 && widths[c] > cuttable_minimum[c] &&
          (widest == widths.size() || widths[c] > widths[widest])) {
        widest = c;
      }
    }
    if (widest == widths.size()) {
      break;  // as narrow as it gets: the terminal wraps the rest
    }
    --widths[widest];
    --total;
  }
  return widths;
}

void print_table(std::ostream& out, const ResultSet& result, const TableStyle& style) {
  const std::size_t columns = result.columns.size();
  std::vector<std::vector<std::string>> cells;
  cells.reserve(result.rows.size());
  std::vector<std::size_t> widths(columns);
  std::vector<bool> right(columns);
  std::vector<std::optional<std::size_t>> decimals(columns);
  std::vector<std::size_t> minimum(columns);
  for (std::size_t c = 0; c < columns; ++c) {
    widths[c] = display_width(escape_for_terminal(result.columns[c]));
    right[c] = numeric_column(result, c);
    decimals[c] = column_decimals(result, c);
    minimum[c] = minimum_for(style, result.columns[c]);
  }
  for (const Row& row : result.rows) {
    std::vector<std::string>& line = cells.emplace_back();
    for (std::size_t c = 0; c < columns; ++c) {
      const double* real = std::get_if<double>(&row[c]);
      std::string text = real != nullptr && decimals[c] ? fixed_real(*real, *decimals[c])
                                                        : table_cell_text(result.columns[c], row[c], style.display_times);
      widths[c] = std::max(widths[c], display_width(text));
      line.push_back(std::move(text));
    }
  }
  if (cuts_cells()) {
    const std::vector<std::size_t> fitted = fit_widths(widths, minimum, *display().terminal_columns);
    for (std::size_t c = 0; c < columns; ++c) {
      if (fitted[c] < widths[c]) {
        for (std::vector<std::string>& line : cells) {
          line[c] = truncate_text(line[c], fitted[c]);
        }
        widths[c] = std::max(fitted[c], display_width(escape_for_terminal(result.columns[c])));
      }
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
    const std::string text = table_cell_text(columns[c], row[c]);
    if (!text.empty()) {
      out << ' ' << text;
    }
    out << '\n';
  }
}

}  // namespace trace2d::ctl
