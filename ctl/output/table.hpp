#pragma once
// Human-readable output: aligned tables and "name: value" records.
//
// Conventions, shared by every command:
//   - NULL prints as an empty cell;
//   - REAL always shows a decimal point or exponent, BLOB prints as x'hex';
//   - control characters in text are escaped (\n, \t, \r, \xNN; the C1
//     controls U+0080..U+009F as \u0080..\u009f), and so are the bidi,
//     invisible and separator characters of ctl/output/unsafe_text.hpp
//     (\u202e); invalid UTF-8 becomes U+FFFD; so one row is always one line
//     of output, nothing stored reaches the terminal as a control sequence,
//     and what is shown reads as what is stored;
//   - columns are two spaces apart, numeric columns right-aligned, and the
//     last column is not padded (no trailing blanks);
//   - the REAL values of a column have one number of decimals, the most any
//     of them needs (at most 6): 6.320 beside 11.453;
//   - times are local with their zone, or UTC with --utc (display.hpp).

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctl/output/result_set.hpp"

namespace trace2d::ctl {

// A column whose cells may be cut (with "...") on a terminal, so that a
// line fits its width: never below `min_chars` characters. Nothing is cut
// when standard output is not a terminal, nor with --no-trunc
// (ctl/output/display.hpp).
struct ColumnLimit {
  std::string column;
  std::size_t min_chars = 0;
};

// The narrowest a cuttable column gets on a terminal.
inline constexpr std::size_t k_min_cut_chars = 24;

struct TableStyle {
  TableStyle() = default;
  explicit TableStyle(std::vector<ColumnLimit> column_limits) : limits(std::move(column_limits)) {}

  std::vector<ColumnLimit> limits;
  // Rows to draw attention to (a failed run): printed in red when `colour`.
  std::function<bool(const Row&)> alert;
  bool colour = false;
  // Stored times in the time columns shown as display_time() has them
  // (local, with the zone); `sql` shows values as stored.
  bool display_times = true;
};

// SGR sequences for --color: red for failures, and back to normal.
inline constexpr std::string_view k_red = "\033[31m";
inline constexpr std::string_view k_normal = "\033[m";

void print_table(std::ostream& out, const ResultSet& result, const TableStyle& style = {});

// One "name: value" line per column of `row`; times as in tables.
void print_record(std::ostream& out, const std::vector<std::string>& columns, const Row& row);

// A cell of column `column` as a table shows it: cell_text(), a stored
// time as display_time() shows it.
[[nodiscard]] std::string table_cell_text(const std::string& column, const Value& value, bool display_times = true);

// The widths of `widths`' columns (two spaces apart) cut down to fit
// `line_width`: the widest of the `cuttable` ones first, none below its
// minimum. Returns the new widths.
[[nodiscard]] std::vector<std::size_t> fit_widths(std::vector<std::size_t> widths,
                                                  const std::vector<std::size_t>& cuttable_minimum,
                                                  std::size_t line_width);

// A value as a table cell shows it (escaped, untruncated).
[[nodiscard]] std::string cell_text(const Value& value);

// Text made safe for one terminal line: see the conventions above.
[[nodiscard]] std::string escape_for_terminal(std::string_view text);

// Characters (code points) in valid UTF-8 `text`: its width on a terminal,
// near enough for Latin, Cyrillic and the like.
[[nodiscard]] std::size_t display_width(std::string_view text);

// `text` (valid UTF-8) cut to at most `max_chars` characters, the last three
// of them "..." when anything was cut.
[[nodiscard]] std::string truncate_text(std::string_view text, std::size_t max_chars);

}  // namespace trace2d::ctl
