#pragma once
// How tables show times and how wide they may be: set once by main from
// --utc, --no-trunc and the terminal, read by every table and record.
// Machine formats (JSON, CSV, TSV) ignore it: they keep stored values.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace trace2d::ctl {

struct Display {
  // --utc: times in UTC; else in local time (TZ), with the zone's name.
  bool utc = false;
  // The terminal's width in columns, when standard output is one; unset:
  // not a terminal, so no cell is ever cut (`trace2ctl sessions | grep`).
  std::optional<std::size_t> terminal_columns;
  // --no-trunc, -l: whole cells even on a terminal.
  bool whole = false;
};

void set_display(const Display& display);
[[nodiscard]] const Display& display();

// Whether long cells are cut to fit the line: on a terminal, unless --no-trunc.
[[nodiscard]] bool cuts_cells();

// The width of the terminal on `fd`: COLUMNS when set to a number (as
// journalctl and ls honour it), else the kernel's (TIOCGWINSZ); unset when
// `fd` is not a terminal.
[[nodiscard]] std::optional<std::size_t> terminal_columns(int fd);

// A stored time (git's "YYYY-MM-DDTHH:MM:SS.ffffffZ") as a table shows it:
// "2026-11-27 12:36:03.393 EST" in local time, "… UTC" with --utc, both of
// which --since reads back. Text that is not such a time is returned as it is.
[[nodiscard]] std::string display_time(std::string_view stored);
// The same to the minute: "2026-11-27 12:36 EST" (the report's windows).
[[nodiscard]] std::string display_minute(std::string_view stored);

// Whether a column of that name holds stored times (start_time, time,
// first_received, ...).
[[nodiscard]] bool is_time_column(std::string_view name);

}  // namespace trace2d::ctl
