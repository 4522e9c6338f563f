#include "proto/json_quote.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace trace2d::proto {
namespace {

constexpr std::uint64_t k_ones = 0x0101010101010101ULL;
constexpr std::uint64_t k_highs = 0x8080808080808080ULL;

// Whether a byte of `word` is zero. As a whole the test is exact (a borrow
// may mark the wrong byte, never a word without a zero byte).
constexpr bool has_zero_byte(std::uint64_t word) { return ((word - k_ones) & ~word & k_highs) != 0; }

// Whether one of the eight bytes of `word` needs an escape: a control
// character (below 0x20), '"' or '\\'. Most text has none, and is then
// copied eight bytes a step instead of one.
constexpr bool needs_escape(std::uint64_t word) {
  const bool control = ((word - k_ones * 0x20) & ~word & k_highs) != 0;
  return control || has_zero_byte(word ^ (k_ones * '"')) || has_zero_byte(word ^ (k_ones * '\\'));
}

static_assert(!needs_escape(0x6867666564636261ULL));  // "abcdefgh"
static_assert(!needs_escape(0xFFFEA9C3BDBFEF20ULL));  // a space and bytes >= 0x80
static_assert(needs_escape(0x6867666564632261ULL));   // a '"'
static_assert(needs_escape(0x5C67666564636261ULL));   // a '\\' last
static_assert(needs_escape(0x686766656463611FULL));   // a control byte first
static_assert(needs_escape(0x0067666564636261ULL));   // a NUL

}  // namespace

void append_json_quoted(std::string& out, std::string_view text) {
  static constexpr char k_hex[] = "0123456789abcdef";
  out.push_back('"');
  const std::size_t size = text.size();
  std::size_t plain = 0;  // start of the run of bytes that need no escape
  std::size_t i = 0;
  while (i < size) {
    if (size - i >= sizeof(std::uint64_t)) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + i, sizeof word);
      if (!needs_escape(word)) {
        i += sizeof word;
        continue;
      }
    }
    // A word with a byte to escape, or the last few bytes: one at a time.
    const std::size_t end = i + std::min(size - i, sizeof(std::uint64_t));
    for (; i < end; ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x20 && c != '"' && c != '\\') {
        continue;
      }
      out.append(text.substr(plain, i - plain));
      plain = i + 1;
      out.push_back('\\');
      switch (c) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '\b': out.push_back('b'); break;
        case '\t': out.push_back('t'); break;
        case '\n': out.push_back('n'); break;
        case '\f': out.push_back('f'); break;
        case '\r': out.push_back('r'); break;
        default:
          out.append("u00");
          out.push_back(k_hex[c >> 4]);
          out.push_back(k_hex[c & 0xF]);
          break;
      }
    }
  }
  out.append(text.substr(plain));
  out.push_back('"');
}

std::string json_quoted(std::string_view text) {
  std::string out;
  append_json_quoted(out, text);
  return out;
}

}  // namespace trace2d::proto
