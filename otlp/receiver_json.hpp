#pragma once
// JSON text as trace2receiver writes its attribute values (argv, param and
// repo sets, data, timers, counters: docs/otlp.md, "Compared with
// trace2receiver"): Go's encoding/json, so that a dashboard that matches
// the text, not only its parsed value, sees the same characters. Go
// escapes <, > and & as \u003c, \u003e, \u0026, and U+2028 and U+2029,
// and writes each byte of invalid UTF-8 as \ufffd.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace trace2d::otlp {

// `text` as a quoted JSON string, Go's way.
void append_go_json_string(std::string& out, std::string_view text);

// ["a","b"], Go's way.
[[nodiscard]] std::string go_json_string_array(const std::vector<std::string>& items);

// {"outer":{"inner":value}}, keys in byte order as Go sorts a map's, each
// value JSON text already.
using NestedJson = std::map<std::string, std::map<std::string, std::string>>;
[[nodiscard]] std::string go_json_nested(const NestedJson& values);

// {"key":value}, in key order, each value JSON text already.
[[nodiscard]] std::string go_json_object(const std::map<std::string, std::string>& values);

}  // namespace trace2d::otlp
