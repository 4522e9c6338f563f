#include "ctl/output/unsafe_text.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace trace2d::ctl {
namespace {

// Inclusive ranges, sorted: Unicode 15's format characters (Cf), the line
// and paragraph separators (Zl, Zp) and the invisible Hangul fillers. The
// controls (Cc) are tested before the table.
constexpr std::pair<char32_t, char32_t> k_unsafe_ranges[] = {
    {0x00AD, 0x00AD},    // soft hyphen
    {0x0600, 0x0605},    // Arabic number signs
    {0x061C, 0x061C},    // Arabic letter mark
    {0x06DD, 0x06DD},    // Arabic end of ayah
    {0x070F, 0x070F},    // Syriac abbreviation mark
    {0x0890, 0x0891},    // Arabic pound and piastre marks above
    {0x08E2, 0x08E2},    // Arabic disputed end of ayah
    {0x115F, 0x1160},    // Hangul choseong and jungseong fillers
    {0x180E, 0x180E},    // Mongolian vowel separator
    {0x200B, 0x200F},    // zero-width space, (non-)joiner, LRM, RLM
    {0x2028, 0x202E},    // line and paragraph separators, LRE, RLE, PDF, LRO, RLO
    {0x2060, 0x206F},    // word joiner, invisible operators, LRI, RLI, FSI, PDI, deprecated formats
    {0x3164, 0x3164},    // Hangul filler
    {0xFEFF, 0xFEFF},    // zero-width no-break space (BOM)
    {0xFFA0, 0xFFA0},    // halfwidth Hangul filler
    {0xFFF9, 0xFFFB},    // interlinear annotation
    {0x110BD, 0x110BD},  // Kaithi number sign
    {0x110CD, 0x110CD},  // Kaithi number sign above
    {0x13430, 0x1343F},  // Egyptian hieroglyph format controls
    {0x1BCA0, 0x1BCA3},  // shorthand format controls
    {0x1D173, 0x1D17A},  // musical symbol format controls
    {0xE0001, 0xE0001},  // language tag
    {0xE0020, 0xE007F},  // tag characters
};

constexpr char k_hex[] = "0123456789abcdef";

void append_hex(std::string& out, char32_t value, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
    out.push_back(k_hex[(value >> shift) & 0xF]);
  }
}

}  // namespace

bool is_unsafe_code_point(char32_t code_point) {
  if (code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F)) {
    return true;
  }
  if (code_point < 0xAD) {
    return false;
  }
  const auto* after = std::upper_bound(std::begin(k_unsafe_ranges), std::end(k_unsafe_ranges), code_point,
                                       [](char32_t c, const std::pair<char32_t, char32_t>& range) { return c < range.first; });
  return after != std::begin(k_unsafe_ranges) && code_point <= std::prev(after)->second;
}

std::size_t unsafe_character_at(std::string_view text, std::size_t i, char32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) {
    code_point = lead;
    return lead < 0x20 || lead == 0x7F ? 1 : 0;
  }
  std::size_t length = 0;
  char32_t value = 0;
  if (lead >= 0xF0) {
    length = 4;
    value = lead & 0x07;
  } else if (lead >= 0xE0) {
    length = 3;
    value = lead & 0x0F;
  } else if (lead >= 0xC0) {
    length = 2;
    value = lead & 0x1F;
  } else {
    return 0;  // a continuation byte
  }
  if (i + length > text.size()) {
    return 0;  // not valid UTF-8: the caller repairs first
  }
  for (std::size_t k = 1; k < length; ++k) {
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  code_point = value;
  return is_unsafe_code_point(value) ? length : 0;
}

void append_visible_escape(std::string& out, char32_t code_point) {
  if (code_point > 0xFFFF) {
    out += "\\U";
    append_hex(out, code_point, 8);
  } else {
    out += "\\u";
    append_hex(out, code_point, 4);
  }
}

void append_json_escape(std::string& out, char32_t code_point) {
  if (code_point > 0xFFFF) {
    const char32_t offset = code_point - 0x10000;
    out += "\\u";
    append_hex(out, 0xD800 + (offset >> 10), 4);
    out += "\\u";
    append_hex(out, 0xDC00 + (offset & 0x3FF), 4);
  } else {
    out += "\\u";
    append_hex(out, code_point, 4);
  }
}

std::string with_unsafe_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_with_unsafe_replaced(out, text, append_visible_escape);
  return out;
}

}  // namespace trace2d::ctl
