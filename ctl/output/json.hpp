#pragma once
// Machine-readable output (--json). Every command prints one JSON document.
//
// Values keep their SQLite storage class: INTEGER and REAL become numbers,
// TEXT a string, NULL null, and BLOB a string of lowercase hex (two digits
// per byte). Infinite REALs, which JSON cannot express, become null. Text
// that is not valid UTF-8 has its invalid bytes replaced by U+FFFD, so every
// document is valid JSON. Controls, bidi and invisible characters
// (ctl/output/unsafe_text.hpp) are written as \u escapes, never raw: a JSON
// reader gets the stored text back, a terminal showing the document shows
// what it holds.

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ctl/output/result_set.hpp"

namespace trace2d::ctl {

void append_json_value(std::string& out, const Value& value);

// `text` as a quoted JSON string, invalid UTF-8 repaired, unsafe characters
// escaped; otherwise as git quotes (proto/json_quote.hpp).
void append_json_string(std::string& out, std::string_view text);

// Valid JSON text (a stored argv, an event's value) with the unsafe
// characters inside its strings escaped.
void append_json_text(std::string& out, std::string_view json);

// {"column": value, ...}; the text of `json_columns` (see ResultSet)
// embedded as JSON when it parses as such.
void append_json_object(std::string& out, const std::vector<std::string>& columns, const Row& row,
                        const std::vector<std::string>& json_columns = {});

// [{...}, {...}], one object per row.
void append_json_array(std::string& out, const ResultSet& result);

// The array plus a newline, written to `out`.
void print_json_array(std::ostream& out, const ResultSet& result);

}  // namespace trace2d::ctl
