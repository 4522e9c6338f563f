#pragma once
// The characters that no output of trace2ctl passes on as they are, in one
// place for every format: text from the database is whatever any local user
// sent, and these characters make a terminal act (C0 and C1 controls: ESC,
// CSI U+009B) or make what is shown differ from what is stored (a bidi
// override turns "gpj.exe" around, a zero-width space or a line separator
// hides or moves text, a look-alike session's name hides an invisible
// character).
//
// Unsafe: C0 controls and DEL, the C1 controls U+0080..U+009F, U+2028 and
// U+2029 (line and paragraph separators), every format character (Unicode
// category Cf: the bidi marks, embeddings, overrides and isolates U+061C,
// U+200E/F, U+202A..E, U+2066..9; zero-width U+200B..D, U+2060..4, U+FEFF;
// the soft hyphen; interlinear annotations; tags U+E0001, U+E0020..7F; and
// the others), and the invisible Hangul fillers (U+115F, U+1160, U+3164,
// U+FFA0).
//
// Each format writes an unsafe character in its own way, always visible and
// never as the character itself: tables, records, tree text, CSV, TSV and
// HTML as the text `\u202e` (`\U000e0001` past U+FFFF; tables keep `\n`,
// `\t`, `\r`, `\xNN` for C0), JSON as the escape `\u202e` (a surrogate pair
// past U+FFFF), so a JSON reader gets the stored text back.

#include <cstddef>
#include <string>
#include <string_view>

namespace trace2d::ctl {

[[nodiscard]] bool is_unsafe_code_point(char32_t code_point);

// Bytes taken by the character at `i` of valid UTF-8 `text` when it is
// unsafe (its code point in `code_point`), 0 when it is not (or `i` is not
// the first byte of a character).
[[nodiscard]] std::size_t unsafe_character_at(std::string_view text, std::size_t i, char32_t& code_point);

// Appends valid UTF-8 `text` to `out`, each unsafe character replaced by
// what `escape(out, code_point)` appends; safe runs are copied whole.
template <typename Escape>
void append_with_unsafe_replaced(std::string& out, std::string_view text, Escape&& escape) {
  std::size_t plain = 0;
  for (std::size_t i = 0; i < text.size();) {
    char32_t code_point = 0;
    const std::size_t length = unsafe_character_at(text, i, code_point);
    if (length == 0) {
      ++i;
      continue;
    }
    out.append(text.substr(plain, i - plain));
    escape(out, code_point);
    i += length;
    plain = i;
  }
  out.append(text.substr(plain));
}

// `\u202e` as text: "\u" and four lowercase hex digits, or "\U" and eight
// past U+FFFF.
void append_visible_escape(std::string& out, char32_t code_point);

// As a JSON escape: `\u202e`, or a surrogate pair past U+FFFF.
void append_json_escape(std::string& out, char32_t code_point);

// Valid UTF-8 `text` with every unsafe character as append_visible_escape
// writes it (what CSV and HTML use).
[[nodiscard]] std::string with_unsafe_escaped(std::string_view text);

}  // namespace trace2d::ctl
