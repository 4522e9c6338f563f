#include "db/event_codec.hpp"

#include <array>
#include <charconv>

#include "proto/json_quote.hpp"

namespace trace2d::db {
namespace {

void append_integer(std::string& out, std::int64_t n) {
  std::array<char, 24> digits{};
  out.append(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), n).ptr);
}

void append_key(std::string& out, std::string_view name) {
  out += ",\"";
  out += name;
  out += "\":";
}

}  // namespace

// %06d is six wide with the sign, zeros after it (-5 is "-00005").
void append_stored_micros(std::string& out, std::int64_t us) {
  append_integer(out, us / 1000000);
  out += '.';
  const std::int64_t fraction = us % 1000000;
  std::array<char, 24> digits{};
  std::string_view text(digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), fraction).ptr);
  std::size_t width = 6;
  if (fraction < 0) {
    out += '-';
    text.remove_prefix(1);
    --width;
  }
  out.append(text.size() < width ? width - text.size() : 0, '0');
  out += text;
}

namespace {

constexpr std::array<bool, 256> k_needs_escape = [] {
  std::array<bool, 256> table{};
  for (std::size_t c = 0; c < 0x20; ++c) {
    table[c] = true;
  }
  table['"'] = true;
  table['\\'] = true;
  return table;
}();

bool needs_json_escape(std::string_view text) {
  for (const char c : text) {
    if (k_needs_escape[static_cast<unsigned char>(c)]) {
      return true;
    }
  }
  return false;
}

// Walks a line, consuming the pieces expected at its start.
struct PrefixCursor {
  std::string_view rest;
  bool ok = true;

  void literal(std::string_view expected) {
    if (ok && rest.starts_with(expected)) {
      rest.remove_prefix(expected.size());
    } else {
      ok = false;
    }
  }
  // `text` as git (and SQLite's json_quote) would quote it.
  void quoted(std::string_view text, std::string& scratch) {
    if (!needs_json_escape(text)) {
      literal("\"");
      literal(text);
      literal("\"");
      return;
    }
    scratch.clear();
    proto::append_json_quoted(scratch, text);
    literal(scratch);
  }
  void integer(std::int64_t value) {
    char buf[24];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    literal(std::string_view(buf, static_cast<std::size_t>(end - buf)));
  }
};

// The text of `member` at the start of `rest` (`,"member":`), consumed.
bool take_key(std::string_view& rest, std::string_view member) {
  if (rest.size() < member.size() + 4 || rest[0] != ',' || rest[1] != '"' || rest.substr(2, member.size()) != member ||
      rest[2 + member.size()] != '"' || rest[3 + member.size()] != ':') {
    return false;
  }
  rest.remove_prefix(member.size() + 4);
  return true;
}

// Where a member's value ends: at the next ',' or at the end.
std::string_view value_text(std::string_view rest) {
  return rest.substr(0, rest.find(','));
}

// An integer written as SQLite writes it back (no '+', no leading zeros, no "-0").
std::optional<std::int64_t> exact_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  char buf[24];
  const char* const out = std::to_chars(buf, buf + sizeof buf, value).ptr;
  if (std::string_view(buf, static_cast<std::size_t>(out - buf)) != text) {
    return std::nullopt;
  }
  return value;
}

// git's "%.6f" of a non-negative number of seconds, as microseconds: the
// view's printf('%d.%06d') writes the same text back.
std::optional<std::int64_t> exact_microseconds(std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || text.size() - dot != 7 || (dot > 1 && text[0] == '0') || dot > 12) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == dot) {
      continue;
    }
    if (text[i] < '0' || text[i] > '9') {
      return std::nullopt;
    }
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// A string without escapes, whose text json_quote() writes back as it was.
std::optional<std::string_view> plain_string(std::string_view rest) {
  if (rest.empty() || rest.front() != '"') {
    return std::nullopt;
  }
  const auto close = rest.find('"', 1);
  if (close == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view text = rest.substr(1, close - 1);
  if (needs_json_escape(text)) {  // a backslash: an escape, left in the body
    return std::nullopt;
  }
  if (close + 1 < rest.size() && rest[close + 1] != ',') {
    return std::nullopt;
  }
  return text;
}

}  // namespace

std::string leading_column_list(std::string_view qualifier) {
  std::string list;
  for (const LeadingMember& member : k_leading_members) {
    if (!list.empty()) {
      list += ", ";
    }
    list += qualifier;
    list += member.column;
  }
  return list;
}

bool is_canonical_time_text(std::string_view text) {
  // A time that parsed and has this shape formats back to the same text.
  // Other shapes the parser accepts do not ("t", "z", a leap second ":60",
  // an offset of the same length: "...:01.5+01:00", "...:01.123+00Z").
  if (text.size() != 27 || text[10] != 'T' || text[19] != '.' || text[26] != 'Z' || text.substr(17, 2) == "60") {
    return false;
  }
  for (std::size_t i = 20; i < 26; ++i) {
    if (text[i] < '0' || text[i] > '9') {
      return false;
    }
  }
  return true;
}

std::optional<std::string_view> body_after_canonical_prefix(const proto::Event& event, bool with_time,
                                                            std::string& scratch) {
  // Piece by piece, so that no string is built for the common case.
  const std::string_view json = event.json;
  PrefixCursor cursor{json};
  cursor.literal("{\"event\":");
  cursor.quoted(event.event, scratch);
  cursor.literal(",\"sid\":");
  cursor.quoted(event.sid, scratch);
  if (event.thread) {
    cursor.literal(",\"thread\":");
    cursor.quoted(*event.thread, scratch);
  }
  if (with_time) {
    cursor.literal(",\"time\":\"");
    cursor.literal(event.time_text.value_or(std::string_view()));
    cursor.literal("\"");
  }
  if (event.file) {
    cursor.literal(",\"file\":");
    cursor.quoted(*event.file, scratch);
  }
  if (event.line) {
    cursor.literal(",\"line\":");
    cursor.integer(*event.line);
  }
  if (!cursor.ok || cursor.rest.empty() || json.back() != '}') {
    return std::nullopt;
  }
  const std::string_view body = cursor.rest.substr(0, cursor.rest.size() - 1);
  if (!body.empty() && body.front() != ',') {
    return std::nullopt;
  }
  return body;
}

std::string_view take_leading_members(std::string_view body, LeadingColumns& columns, NameIds& names) {
  // One that is absent is skipped; one that is present but cannot be given
  // back exactly ends the taking (the view writes the taken ones back in
  // front of what is left).
  std::string_view rest = body;
  for (std::size_t i = 0; i < k_leading_members.size(); ++i) {
    const LeadingMember& member = k_leading_members[i];
    std::string_view after = rest;
    if (!take_key(after, member.key)) {
      continue;
    }
    std::optional<std::int64_t> value;
    std::size_t length = 0;
    if (member.value == MemberValue::name) {
      const auto text = plain_string(after);
      value = text ? names.id(*text) : std::nullopt;
      length = text ? text->size() + 2 : 0;
    } else {
      const std::string_view text = value_text(after);
      value = member.value == MemberValue::integer ? exact_integer(text) : exact_microseconds(text);
      length = text.size();
    }
    if (!value) {
      break;
    }
    columns[i] = value;
    rest = after.substr(length);
  }
  return rest;
}

void bind_leading_columns(Statement& stmt, int first_index, const LeadingColumns& columns) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    stmt.bind(first_index + static_cast<int>(i), columns[i]);
  }
}

LeadingColumns read_leading_columns(const Statement& stmt, int first_column) {
  LeadingColumns columns;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    columns[i] = stmt.column_optional_int(first_column + static_cast<int>(i));
  }
  return columns;
}

void append_sqlite_json_quoted(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c <= 0x1f) {
      static constexpr std::array<char, 32> k_special = {0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r'};
      if (k_special[c] != 0) {
        out += '\\';
        out += k_special[c];
      } else {
        static constexpr std::string_view k_hex = "0123456789abcdef";
        out += "\\u00";
        out += k_hex[c >> 4];
        out += k_hex[c & 0xf];
      }
    } else {
      out += ch;
    }
  }
  out += '"';
}

void append_stored_event_object(std::string& out, std::string_view body, const LeadingColumns& columns,
                                NameTexts& names) {
  if (!body.empty() && body.front() == '{') {
    out += body;
    return;
  }
  const std::size_t open = out.size();
  out += '{';
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (!columns[i]) {
      continue;
    }
    const LeadingMember& member = k_leading_members[i];
    switch (member.value) {
      case MemberValue::integer:
        append_key(out, member.key);
        append_integer(out, *columns[i]);
        break;
      case MemberValue::microseconds:
        append_key(out, member.key);
        append_stored_micros(out, *columns[i]);
        break;
      case MemberValue::name:
        append_key(out, member.key);
        if (const std::optional<std::string_view> text = names.text(*columns[i])) {
          append_sqlite_json_quoted(out, *text);
        } else {
          out += "null";  // json_quote(NULL), as the view's LEFT JOIN finds no row
        }
        break;
    }
  }
  out += body;
  if (out.size() > open + 1) {
    out.erase(open + 1, 1);  // the first member's comma
  }
  out += '}';
}

}  // namespace trace2d::db
