#pragma once
// JSON string quoting exactly as git's json-writer and SQLite's json_quote()
// both do it: escape '"' and '\\', \b \t \n \f \r by name, other bytes below
// 0x20 as \u00xx (lowercase hex), everything else copied as is. Matching
// both byte for byte lets the store rebuild an event's JSON in SQL and get
// git's original text back.

#include <string>
#include <string_view>

namespace trace2d::proto {

void append_json_quoted(std::string& out, std::string_view text);

[[nodiscard]] std::string json_quoted(std::string_view text);

}  // namespace trace2d::proto
