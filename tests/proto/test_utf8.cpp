// UTF-8 validation and repair (proto/utf8.hpp), checked against the Unicode
// Standard's well-formedness table (3-7) and its "substitution of maximal
// subparts" examples (tables 3-8 to 3-11), plus an independent reference.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/utf8.hpp"

namespace proto = trace2d::proto;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) {
    out.push_back(static_cast<char>(v));
  }
  return out;
}

std::string repeat_fffd(std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out.append(proto::k_replacement_character);
  }
  return out;
}

// An independent reference, written from the definitions rather than from
// Table 3-7: a sequence of n bytes with the right bit patterns is well formed
// when the code point it encodes needs exactly n bytes, is not a surrogate
// and is at most U+10FFFF. A prefix is part of a well-formed sequence when
// some completion of it is well formed: completing with 0x80.. gives the
// smallest code point, with ..0xBF the largest, and every value between is
// reachable, so it is enough that [min, max] meets a valid range.
std::size_t expected_length(unsigned char lead) {
  if (lead < 0x80) {
    return 1;
  }
  if ((lead & 0xE0) == 0xC0) {
    return 2;
  }
  if ((lead & 0xF0) == 0xE0) {
    return 3;
  }
  if ((lead & 0xF8) == 0xF0) {
    return 4;
  }
  return 0;
}

std::uint32_t decode_with_fill(std::string_view prefix, std::size_t length, unsigned char fill) {
  static constexpr std::array<unsigned char, 5> k_lead_mask{0, 0x7F, 0x1F, 0x0F, 0x07};
  std::uint32_t cp = static_cast<unsigned char>(prefix[0]) & k_lead_mask[length];
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char b = k < prefix.size() ? static_cast<unsigned char>(prefix[k]) : fill;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return cp;
}

bool completable(std::string_view prefix) {
  const std::size_t length = expected_length(static_cast<unsigned char>(prefix[0]));
  if (length == 0 || prefix.size() > length) {
    return false;
  }
  for (std::size_t k = 1; k < prefix.size(); ++k) {
    if ((static_cast<unsigned char>(prefix[k]) & 0xC0) != 0x80) {
      return false;
    }
  }
  static constexpr std::array<std::uint32_t, 5> k_min{0, 0, 0x80, 0x800, 0x10000};
  static constexpr std::array<std::uint32_t, 5> k_max{0, 0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
  const std::uint32_t lo = decode_with_fill(prefix, length, 0x80);
  const std::uint32_t hi = decode_with_fill(prefix, length, 0xBF);
  const std::uint32_t from = std::max(lo, k_min[length]);
  const std::uint32_t to = std::min(hi, k_max[length]);
  if (from > to) {
    return false;
  }
  // Only surrogates left?
  return !(from >= 0xD800 && to <= 0xDFFF);
}

struct Reference {
  std::string text;
  std::size_t replaced = 0;
  bool valid = true;
};

Reference reference_repair(std::string_view s) {
  Reference r;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t n = 1;
    while (i + n < s.size() && n < 4 && completable(s.substr(i, n + 1))) {
      ++n;
    }
    const std::string_view candidate = s.substr(i, n);
    const bool whole = completable(candidate) &&
                       candidate.size() == expected_length(static_cast<unsigned char>(candidate[0]));
    if (whole) {
      r.text.append(candidate);
    } else {
      r.text.append(proto::k_replacement_character);
      ++r.replaced;
      r.valid = false;
      // A byte that cannot start a sequence is one maximal subpart alone.
      n = completable(s.substr(i, 1)) ? n : 1;
    }
    i += n;
  }
  return r;
}

// Bytes at the edges of every range in Table 3-7.
constexpr std::array<int, 27> k_interesting{0x00, 0x22, 0x41, 0x5C, 0x7F, 0x80, 0x8F, 0x90,
                                            0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                                            0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3,
                                            0xF4, 0xF5, 0xFF};

}  // namespace

TEST(Utf8Reference, AgreesWithTheUnicodeExamples) {
  // Guards the reference itself before it judges the code under test.
  EXPECT_EQ(reference_repair(bytes({0xF0, 0x80, 0x80})).replaced, 3u);
  EXPECT_EQ(reference_repair(bytes({0xE2, 0x82})).replaced, 1u);
  EXPECT_TRUE(reference_repair("\xE2\x82\xAC").valid);
  EXPECT_TRUE(reference_repair("\xF4\x8F\xBF\xBF").valid);
  EXPECT_FALSE(reference_repair("\xF4\x90\x80\x80").valid);
}

TEST(Utf8Valid, AcceptsWellFormedText) {
  EXPECT_TRUE(proto::is_valid_utf8(""));
  EXPECT_TRUE(proto::is_valid_utf8("plain ASCII, with DEL \x7F and NUL"));
  EXPECT_TRUE(proto::is_valid_utf8(std::string_view("a\0b", 3)));
  EXPECT_TRUE(proto::is_valid_utf8("\xC2\x80"));           // U+0080, smallest 2-byte
  EXPECT_TRUE(proto::is_valid_utf8("\xDF\xBF"));           // U+07FF
  EXPECT_TRUE(proto::is_valid_utf8("\xE0\xA0\x80"));       // U+0800, smallest 3-byte
  EXPECT_TRUE(proto::is_valid_utf8("\xED\x9F\xBF"));       // U+D7FF, just below surrogates
  EXPECT_TRUE(proto::is_valid_utf8("\xEE\x80\x80"));       // U+E000, just above
  EXPECT_TRUE(proto::is_valid_utf8("\xEF\xBF\xBD"));       // U+FFFD
  EXPECT_TRUE(proto::is_valid_utf8("\xEF\xBF\xBF"));       // U+FFFF
  EXPECT_TRUE(proto::is_valid_utf8("\xF0\x90\x80\x80"));   // U+10000, smallest 4-byte
  EXPECT_TRUE(proto::is_valid_utf8("\xF4\x8F\xBF\xBF"));   // U+10FFFF, largest
  EXPECT_TRUE(proto::is_valid_utf8("gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80"));
}

TEST(Utf8Valid, RejectsMalformedText) {
  EXPECT_FALSE(proto::is_valid_utf8("\xFF"));
  EXPECT_FALSE(proto::is_valid_utf8("\xC3\x28"));              // lead + non-continuation
  EXPECT_FALSE(proto::is_valid_utf8("\xC0\xAF"));              // overlong '/'
  EXPECT_FALSE(proto::is_valid_utf8("\xC1\xBF"));              // overlong
  EXPECT_FALSE(proto::is_valid_utf8("\xE0\x9F\xBF"));          // overlong 3-byte
  EXPECT_FALSE(proto::is_valid_utf8("\xF0\x8F\xBF\xBF"));      // overlong 4-byte
  EXPECT_FALSE(proto::is_valid_utf8("\xED\xA0\x80"));          // U+D800 surrogate
  EXPECT_FALSE(proto::is_valid_utf8("\xED\xBF\xBF"));          // U+DFFF surrogate
  EXPECT_FALSE(proto::is_valid_utf8("\xF4\x90\x80\x80"));      // U+110000
  EXPECT_FALSE(proto::is_valid_utf8("\xF5\x80\x80\x80"));
  EXPECT_FALSE(proto::is_valid_utf8("\x80"));                  // lone continuation
  EXPECT_FALSE(proto::is_valid_utf8("abc\xE2\x82"));           // truncated at the end
  EXPECT_FALSE(proto::is_valid_utf8("\xF0\x9F\x98"));
}

// Short ASCII is answered without simdjson: a bad byte anywhere around the
// cut-over is still found, whatever the length.
TEST(Utf8Valid, ShortAndLongAsciiWithABadByteAnywhere) {
  for (std::size_t size = 1; size <= 130; ++size) {
    std::string text(size, 'a');
    EXPECT_TRUE(proto::is_valid_utf8(text)) << size;
    for (const std::size_t at : {std::size_t{0}, size / 2, size - 1}) {
      std::string bad = text;
      bad[at] = '\xFF';
      EXPECT_FALSE(proto::is_valid_utf8(bad)) << size << " at " << at;
    }
  }
}

TEST(Utf8Repair, ValidTextIsCopiedUnchanged) {
  const std::string text = "git \xE2\x80\x94 gr\xC3\xBC\xC3\x9F \xF0\x9F\x98\x80\x7F";
  std::string out = "prefix:";
  EXPECT_EQ(proto::append_repaired_utf8(out, text), 0u);
  EXPECT_EQ(out, "prefix:" + text);
  EXPECT_EQ(proto::repair_utf8(text), text);
  EXPECT_EQ(proto::repair_utf8(""), "");
}

TEST(Utf8Repair, AppendKeepsWhatIsAlreadyThere) {
  std::string out = "{\"a\":\"";
  EXPECT_EQ(proto::append_repaired_utf8(out, "x\xFFy"), 1u);
  EXPECT_EQ(out, std::string("{\"a\":\"x") + std::string(proto::k_replacement_character) + "y");
}

struct RepairCase {
  const char* name;
  std::string input;
  std::string expected;
  std::size_t replaced;
};

class Utf8RepairCases : public ::testing::TestWithParam<RepairCase> {};

TEST_P(Utf8RepairCases, ReplacesEachMaximalSubpart) {
  const RepairCase& c = GetParam();
  std::string out;
  EXPECT_EQ(proto::append_repaired_utf8(out, c.input), c.replaced);
  EXPECT_EQ(out, c.expected);
  EXPECT_TRUE(proto::is_valid_utf8(out));
  EXPECT_EQ(proto::repair_utf8(c.input), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Unicode, Utf8RepairCases,
    ::testing::Values(
        RepairCase{"ff", "a\xFF" "b", "a" + repeat_fffd(1) + "b", 1},
        RepairCase{"c3_28", "\xC3\x28", repeat_fffd(1) + "(", 1},
        RepairCase{"overlong_c0_af", "\xC0\xAF", repeat_fffd(2), 2},
        RepairCase{"surrogate_ed_a0_80", "\xED\xA0\x80", repeat_fffd(3), 3},
        RepairCase{"f0_80_80", "\xF0\x80\x80", repeat_fffd(3), 3},
        RepairCase{"e2_82_at_end", "\xE2\x82", repeat_fffd(1), 1},
        RepairCase{"truncated_3_byte_before_quote", "\"x\xE2\x82\"", "\"x" + repeat_fffd(1) + "\"", 1},
        RepairCase{"truncated_4_byte", "\xF0\x9F\x98" "a", repeat_fffd(1) + "a", 1},
        RepairCase{"above_10ffff", "\xF4\x90\x80\x80", repeat_fffd(4), 4},
        RepairCase{"f5_never_starts", "\xF5\x80", repeat_fffd(2), 2},
        RepairCase{"valid_after_invalid", "\xFF\xE2\x82\xAC", repeat_fffd(1) + "\xE2\x82\xAC", 1},
        // Unicode 15, Table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64
        RepairCase{"table_3_8",
                   bytes({0x61, 0xF1, 0x80, 0x80, 0xE1, 0x80, 0xC2, 0x62, 0x80, 0x63, 0x80, 0xBF,
                          0x64}),
                   "a" + repeat_fffd(3) + "b" + repeat_fffd(1) + "c" + repeat_fffd(2) + "d", 6},
        // Table 3-9: C0 AF E0 80 BF F0 81 82 41 (non-shortest forms)
        RepairCase{"table_3_9", bytes({0xC0, 0xAF, 0xE0, 0x80, 0xBF, 0xF0, 0x81, 0x82, 0x41}),
                   repeat_fffd(8) + "A", 8},
        // Table 3-10: ED A0 80 ED BF BF ED AF 41 (surrogates)
        RepairCase{"table_3_10", bytes({0xED, 0xA0, 0x80, 0xED, 0xBF, 0xBF, 0xED, 0xAF, 0x41}),
                   repeat_fffd(8) + "A", 8},
        // Table 3-11: F4 91 92 93 FF 41 80 BF 42 (beyond U+10FFFF)
        RepairCase{"table_3_11", bytes({0xF4, 0x91, 0x92, 0x93, 0xFF, 0x41, 0x80, 0xBF, 0x42}),
                   repeat_fffd(5) + "A" + repeat_fffd(2) + "B", 7},
        // Table 3-12: E1 80 E2 F0 91 92 F1 BF 41 (truncated sequences)
        RepairCase{"table_3_12", bytes({0xE1, 0x80, 0xE2, 0xF0, 0x91, 0x92, 0xF1, 0xBF, 0x41}),
                   repeat_fffd(4) + "A", 4}),
    [](const ::testing::TestParamInfo<RepairCase>& param_info) { return std::string(param_info.param.name); });

// Every string of up to four bytes drawn from the range edges of Table 3-7:
// proto agrees with the reference on validity, output and count.
TEST(Utf8Repair, AgreesWithReferenceOnAllShortSequences) {
  std::vector<std::string> inputs;
  for (int a : k_interesting) {
    inputs.push_back(bytes({a}));
    for (int b : k_interesting) {
      inputs.push_back(bytes({a, b}));
      for (int c : k_interesting) {
        inputs.push_back(bytes({a, b, c}));
        for (int d : k_interesting) {
          inputs.push_back(bytes({a, b, c, d}));
        }
      }
    }
  }
  std::size_t mismatches = 0;
  for (const std::string& input : inputs) {
    const Reference expected = reference_repair(input);
    std::string out;
    const std::size_t replaced = proto::append_repaired_utf8(out, input);
    const bool valid = proto::is_valid_utf8(input);
    if (out != expected.text || replaced != expected.replaced || valid != expected.valid ||
        !proto::is_valid_utf8(out)) {
      if (++mismatches <= 10) {
        std::string hex;
        for (unsigned char ch : input) {
          static constexpr char k_hex[] = "0123456789ABCDEF";
          hex.push_back(k_hex[ch >> 4]);
          hex.push_back(k_hex[ch & 0xF]);
          hex.push_back(' ');
        }
        ADD_FAILURE() << "input " << hex << ": replaced " << replaced << " (expected "
                      << expected.replaced << "), valid " << valid << " (expected "
                      << expected.valid << ")";
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_GT(inputs.size(), 500000u);
}

// Every code point round-trips: encoded, it is valid and repair leaves it alone.
TEST(Utf8Repair, EveryScalarValueIsKept) {
  std::string all;
  for (std::uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      continue;
    }
    if (cp < 0x80) {
      all.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      all.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      all.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      all.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      all.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      all.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      all.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      all.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      all.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      all.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  EXPECT_TRUE(proto::is_valid_utf8(all));
  std::string out;
  EXPECT_EQ(proto::append_repaired_utf8(out, all), 0u);
  EXPECT_TRUE(out == all);
}

TEST(Utf8Repair, LongMixedInputStaysAlignedAfterEachRepair) {
  // Invalid bytes scattered through long ASCII runs (the fast path).
  std::string input;
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    const std::string ascii(static_cast<std::size_t>(i % 37), static_cast<char>('a' + i % 26));
    input += ascii + "\xC3";
    expected += ascii + std::string(proto::k_replacement_character);
  }
  std::string out;
  EXPECT_EQ(proto::append_repaired_utf8(out, input), 1000u);
  EXPECT_EQ(out, expected);
}
