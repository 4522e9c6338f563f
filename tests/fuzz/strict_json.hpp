#pragma once
// A strict RFC 8259 checker, independent of simdjson: the oracle the fuzzers
// hold the parser's promise "an accepted line is valid JSON throughout"
// against. Plain recursive descent over bytes; UTF-8 validity is a separate
// question (proto::is_valid_utf8), so bytes >= 0x80 inside strings pass here.

#include <cstddef>
#include <string_view>

namespace trace2d::fuzz {

class StrictJson {
 public:
  // True when `text` is exactly one JSON value, with optional whitespace
  // around it, nested at most `max_depth` containers deep.
  [[nodiscard]] static bool is_valid(std::string_view text, std::size_t max_depth = 512) {
    StrictJson checker(text, max_depth);
    checker.skip_space();
    if (!checker.value(0)) {
      return false;
    }
    checker.skip_space();
    return checker.m_at == text.size();
  }

  // True when `text` is one JSON object (not an array, string...).
  [[nodiscard]] static bool is_object(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{' && is_valid(text);
  }

 private:
  StrictJson(std::string_view text, std::size_t max_depth) : m_text(text), m_max_depth(max_depth) {}

  [[nodiscard]] bool at_end() const { return m_at >= m_text.size(); }
  [[nodiscard]] char peek() const { return at_end() ? '\0' : m_text[m_at]; }
  bool eat(char c) {
    if (!at_end() && m_text[m_at] == c) {
      ++m_at;
      return true;
    }
    return false;
  }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++m_at;
    }
  }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

  bool literal(std::string_view word) {
    if (m_text.substr(m_at, word.size()) != word) {
      return false;
    }
    m_at += word.size();
    return true;
  }

  bool digits() {
    if (!is_digit(peek())) {
      return false;
    }
    while (is_digit(peek())) {
      ++m_at;
    }
    return true;
  }

  bool number() {
    eat('-');
    if (eat('0')) {
      // no leading zeros: "01" is not JSON
    } else if (!digits()) {
      return false;
    }
    if (eat('.') && !digits()) {
      return false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++m_at;
      if (!eat('+')) {
        eat('-');
      }
      return digits();
    }
    return true;
  }

  bool string() {
    if (!eat('"')) {
      return false;
    }
    while (!at_end()) {
      const auto c = static_cast<unsigned char>(m_text[m_at++]);
      if (c == '"') {
        return true;
      }
      if (c < 0x20) {
        return false;  // control characters must be escaped
      }
      if (c != '\\') {
        continue;
      }
      if (at_end()) {
        return false;
      }
      const char escape = m_text[m_at++];
      if (escape == 'u') {
        for (int i = 0; i < 4; ++i) {
          if (!is_hex(peek())) {
            return false;
          }
          ++m_at;
        }
      } else if (std::string_view("\"\\/bfnrt").find(escape) == std::string_view::npos) {
        return false;
      }
    }
    return false;  // unterminated
  }

  bool value(std::size_t depth) {
    switch (peek()) {
      case '{': return object(depth + 1);
      case '[': return array(depth + 1);
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  bool object(std::size_t depth) {
    if (depth > m_max_depth || !eat('{')) {
      return false;
    }
    skip_space();
    if (eat('}')) {
      return true;
    }
    while (true) {
      skip_space();
      if (!string()) {
        return false;
      }
      skip_space();
      if (!eat(':')) {
        return false;
      }
      skip_space();
      if (!value(depth)) {
        return false;
      }
      skip_space();
      if (eat('}')) {
        return true;
      }
      if (!eat(',')) {
        return false;
      }
    }
  }

  bool array(std::size_t depth) {
    if (depth > m_max_depth || !eat('[')) {
      return false;
    }
    skip_space();
    if (eat(']')) {
      return true;
    }
    while (true) {
      skip_space();
      if (!value(depth)) {
        return false;
      }
      skip_space();
      if (eat(']')) {
        return true;
      }
      if (!eat(',')) {
        return false;
      }
    }
  }

  std::string_view m_text;
  std::size_t m_max_depth;
  std::size_t m_at = 0;
};

}  // namespace trace2d::fuzz
