#pragma once
// Machine-readable output (--json). Every command prints one JSON document.
//
// Values keep their SQLite storage class: INTEGER and REAL become numbers,
// TEXT a string, NULL null, and BLOB a string of lowercase hex (two digits
// per byte). Infinite REALs, which JSON cannot express, become null. Text
// that is not valid UTF-8 has its invalid bytes replaced by U+FFFD, so every
// document is valid JSON.

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ctl/output/result_set.hpp"
#include "proto/utf8.hpp"

namespace trace2d::ctl {

void append_json_value(std::string& out, const Value& value);
using proto::append_json_string;  // quoted, invalid UTF-8 repaired

// {"column": value, ...}; the text of `json_columns` (see ResultSet)
// embedded as JSON when it parses as such.
void append_json_object(std::string& out, const std::vector<std::string>& columns, const Row& row,
                        const std::vector<std::string>& json_columns = {});

// [{...}, {...}], one object per row.
void append_json_array(std::string& out, const ResultSet& result);

// The array plus a newline, written to `out`.
void print_json_array(std::ostream& out, const ResultSet& result);

}  // namespace trace2d::ctl
