#pragma once
// git copies bytes >= 0x80 into JSON strings without checking them, so a
// line can be valid JSON in structure yet not valid UTF-8. These helpers find
// such lines and make a valid copy, keeping the structure intact: every
// maximal invalid subsequence becomes U+FFFD (the Unicode "substitution of
// maximal subparts" practice, as browsers decode).

#include <string>
#include <string_view>

namespace trace2d::proto {

// U+FFFD, the replacement character, in UTF-8.
inline constexpr std::string_view k_replacement_character = "\xEF\xBF\xBD";

[[nodiscard]] bool is_valid_utf8(std::string_view bytes);

// Appends `bytes` to `out` with invalid sequences replaced by U+FFFD.
// Returns the number of replacements made.
std::size_t append_repaired_utf8(std::string& out, std::string_view bytes);

// Convenience: a repaired copy.
[[nodiscard]] std::string repair_utf8(std::string_view bytes);

// The longest prefix of `text` of at most `max_bytes` that does not end
// inside a UTF-8 sequence: where to cut valid text so that it stays valid.
[[nodiscard]] std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

// For output that must be valid JSON (reports, exports): `text` as a quoted
// JSON string (proto/json_quote.hpp), repaired first when not valid UTF-8.
void append_json_string(std::string& out, std::string_view text);

}  // namespace trace2d::proto
