#include "proto/utf8.hpp"

#include <simdjson.h>

#include <cstdint>
#include <cstring>

#include "proto/json_quote.hpp"

namespace trace2d::proto {
namespace {

// Length of the well-formed sequence starting at `i`, or the length of the
// maximal subpart to replace (at least 1) with `valid` = false.
// Follows Unicode Table 3-7 (well-formed UTF-8 byte sequences).
std::size_t scan_sequence(std::string_view s, std::size_t i, bool& valid) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  valid = false;
  if (b0 < 0x80) {
    valid = true;
    return 1;
  }
  std::size_t need = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 == 0xE0) {
    need = 2;
    lo = 0xA0;
  } else if (b0 >= 0xE1 && b0 <= 0xEC) {
    need = 2;
  } else if (b0 == 0xED) {
    need = 2;
    hi = 0x9F;
  } else if (b0 >= 0xEE && b0 <= 0xEF) {
    need = 2;
  } else if (b0 == 0xF0) {
    need = 3;
    lo = 0x90;
  } else if (b0 >= 0xF1 && b0 <= 0xF3) {
    need = 3;
  } else if (b0 == 0xF4) {
    need = 3;
    hi = 0x8F;
  } else {
    return 1;  // 0x80..0xC1, 0xF5..0xFF never start a sequence
  }
  std::size_t k = 1;
  for (; k <= need; ++k) {
    if (i + k >= s.size()) {
      return k;  // truncated: the maximal subpart is what we have
    }
    const unsigned char b = byte(i + k);
    const unsigned char low = (k == 1) ? lo : 0x80;
    const unsigned char high = (k == 1) ? hi : 0xBF;
    if (b < low || b > high) {
      return k;
    }
  }
  valid = true;
  return need + 1;
}

}  // namespace

bool is_valid_utf8(std::string_view bytes) {
  // Most strings checked are short ASCII (an exporter's attribute values):
  // a plain loop answers before simdjson's dispatch has begun.
  constexpr std::size_t k_short = 64;
  if (bytes.size() <= k_short) {
    // Eight bytes at a time, then the rest: ASCII has no high bit.
    std::uint64_t high = 0;
    std::size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, bytes.data() + i, sizeof word);
      high |= word;
    }
    for (; i < bytes.size(); ++i) {
      high |= static_cast<unsigned char>(bytes[i]);
    }
    if ((high & 0x8080808080808080ULL) == 0) {
      return true;
    }
  }
  return simdjson::validate_utf8(bytes.data(), bytes.size());
}

std::size_t append_repaired_utf8(std::string& out, std::string_view bytes) {
  std::size_t replaced = 0;
  std::size_t i = 0;
  out.reserve(out.size() + bytes.size() + 8);
  while (i < bytes.size()) {
    // Copy the ASCII run in one go: almost every byte of a trace is ASCII.
    std::size_t run = i;
    while (run < bytes.size() && static_cast<unsigned char>(bytes[run]) < 0x80) {
      ++run;
    }
    out.append(bytes.substr(i, run - i));
    i = run;
    if (i >= bytes.size()) {
      break;
    }
    bool valid = false;
    const std::size_t n = scan_sequence(bytes, i, valid);
    if (valid) {
      out.append(bytes.substr(i, n));
    } else {
      out.append(k_replacement_character);
      ++replaced;
    }
    i += n;
  }
  return replaced;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) {
    return text;
  }
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;  // text[end] continues a sequence: cut before the sequence's first byte
  }
  return text.substr(0, end);
}

std::string repair_utf8(std::string_view bytes) {
  std::string out;
  append_repaired_utf8(out, bytes);
  return out;
}

void append_json_string(std::string& out, std::string_view text) {
  if (is_valid_utf8(text)) {
    append_json_quoted(out, text);
  } else {
    append_json_quoted(out, repair_utf8(text));
  }
}

}  // namespace trace2d::proto
