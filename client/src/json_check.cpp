#include "client/src/json_check.hpp"

#include <cstddef>

namespace trace2d::client::detail {
namespace {

class Checker {
 public:
  Checker(std::string_view text, int max_depth) : m_text(text), m_max_depth(max_depth) {}

  bool document() {
    skip_space();
    if (!value(0)) {
      return false;
    }
    skip_space();
    return m_pos == m_text.size();
  }

 private:
  [[nodiscard]] bool at_end() const { return m_pos >= m_text.size(); }
  [[nodiscard]] char peek() const { return at_end() ? '\0' : m_text[m_pos]; }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++m_pos;
    }
  }

  bool literal(std::string_view word) {
    if (m_text.substr(m_pos, word.size()) != word) {
      return false;
    }
    m_pos += word.size();
    return true;
  }

  bool digits() {
    const std::size_t start = m_pos;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      ++m_pos;
    }
    return m_pos > start;
  }

  bool number() {
    if (peek() == '-') {
      ++m_pos;
    }
    if (peek() == '0') {
      ++m_pos;
    } else if (!digits()) {
      return false;
    }
    if (peek() == '.') {
      ++m_pos;
      if (!digits()) {
        return false;
      }
    }
    if (peek() == 'e' || peek() == 'E') {
      ++m_pos;
      if (peek() == '+' || peek() == '-') {
        ++m_pos;
      }
      if (!digits()) {
        return false;
      }
    }
    return true;
  }

  bool string() {
    ++m_pos;  // the opening quote
    while (!at_end()) {
      const auto c = static_cast<unsigned char>(m_text[m_pos++]);
      if (c == '"') {
        return true;
      }
      if (c < 0x20) {
        return false;
      }
      if (c == '\\') {
        const char e = peek();
        ++m_pos;
        if (e == 'u') {
          for (int i = 0; i < 4; ++i) {
            const char h = peek();
            const bool hex =
                (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
            if (!hex) {
              return false;
            }
            ++m_pos;
          }
        } else if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' &&
                   e != 'r' && e != 't') {
          return false;
        }
      }
    }
    return false;
  }

  bool container(int depth, char close, bool keyed) {
    ++m_pos;  // '[' or '{'
    skip_space();
    if (peek() == close) {
      ++m_pos;
      return true;
    }
    for (;;) {
      skip_space();
      if (keyed) {
        if (peek() != '"' || !string()) {
          return false;
        }
        skip_space();
        if (peek() != ':') {
          return false;
        }
        ++m_pos;
        skip_space();
      }
      if (!value(depth + 1)) {
        return false;
      }
      skip_space();
      if (peek() == ',') {
        ++m_pos;
        continue;
      }
      if (peek() == close) {
        ++m_pos;
        return true;
      }
      return false;
    }
  }

  bool value(int depth) {
    if (depth >= m_max_depth) {
      return false;
    }
    switch (peek()) {
      case '{': return container(depth, '}', true);
      case '[': return container(depth, ']', false);
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  std::string_view m_text;
  int m_max_depth;
  std::size_t m_pos = 0;
};

}  // namespace

bool is_json_value(std::string_view text, int max_depth) {
  return Checker(text, max_depth).document();
}

void append_compact_json(std::string& out, std::string_view text) {
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      out.push_back(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      out.push_back(c);
      in_string = c == '"';
    }
  }
}

}  // namespace trace2d::client::detail
