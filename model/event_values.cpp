#include "model/event_values.hpp"

#include <sqlite3.h>

#include <array>
#include <charconv>
#include <cstdlib>

#include "db/event_codec.hpp"
#include "proto/utf8.hpp"

namespace trace2d::model::loading {
namespace {

// A real as SQLite turns it into text (sqlite3_column_text, json_quote).
std::string real_text(double value) {
  std::array<char, 64> buffer{};
  sqlite3_snprintf(static_cast<int>(buffer.size()), buffer.data(), "%!.15g", value);
  return buffer.data();
}

// Whether the view writes each leading time back as a number: below zero
// with a fraction, printf('%d.%06d') of -1.5 s is "-1.-500000", and the
// view's obj is not JSON (the encoder keeps such a time in the body).
bool leading_times_are_numbers(const db::LeadingColumns& columns) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] && db::k_leading_members[i].value == db::MemberValue::microseconds && *columns[i] < 0 &&
        *columns[i] % 1000000 != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool StoredEventMembers::parse(std::string_view body, const db::LeadingColumns& columns, db::NameTexts& names,
                               simdjson::dom::parser& parser, std::string& scratch) {
  m_names = &names;
  m_columns = {};
  scratch.clear();
  if (!body.empty() && body.front() == '{') {
    scratch += body;  // the whole event: no member in a column
  } else if ((body.empty() || body.front() == ',') && leading_times_are_numbers(columns)) {
    m_columns = columns;
    scratch += '{';
    if (!body.empty()) {
      scratch += body.substr(1);  // the first member's comma
    }
    scratch += '}';
  } else {
    // As the view gives it, for simdjson to refuse it as SQLite does.
    db::append_stored_event_object(scratch, body, columns, names);
  }
  scratch.reserve(scratch.size() + simdjson::SIMDJSON_PADDING);
  return parser.parse(scratch).get(m_rest) == simdjson::SUCCESS;
}

SqlValue StoredEventMembers::operator[](std::string_view key) const {
  for (std::size_t i = 0; i < m_columns.size(); ++i) {
    const db::LeadingMember& leading = db::k_leading_members[i];
    if (leading.key != key) {
      continue;
    }
    if (!m_columns[i]) {
      break;  // in the body, or absent
    }
    const std::int64_t column = *m_columns[i];
    SqlValue v;
    switch (leading.value) {
      case db::MemberValue::integer:
        v.kind = SqlValue::Kind::integer;
        v.integer = column;
        break;
      case db::MemberValue::microseconds: {
        // The text the view writes, read as simdjson reads it (both round
        // to the nearest double).
        std::string text;
        db::append_stored_micros(text, column);
        v.kind = SqlValue::Kind::real;
        std::from_chars(text.data(), text.data() + text.size(), v.real);
        break;
      }
      case db::MemberValue::name:
        if (const std::optional<std::string_view> text = m_names->text(column)) {
          v.kind = SqlValue::Kind::text;
          v.text = *text;
        }
        break;
    }
    return v;
  }
  return member(m_rest, key);
}

std::optional<std::int64_t> StoredEventMembers::integer(std::string_view key) const {
  const SqlValue v = (*this)[key];
  return v.kind == SqlValue::Kind::integer ? std::optional<std::int64_t>(v.integer) : std::nullopt;
}

std::string as_json(std::string_view text, simdjson::dom::parser& parser) {
  simdjson::dom::element element;
  if (parser.parse(text.data(), text.size()).get(element) == simdjson::SUCCESS) {
    return std::string(text);
  }
  std::string quoted;
  proto::append_json_string(quoted, text);
  return quoted;
}

SqlValue sql_value(simdjson::dom::element element) {
  SqlValue v;
  switch (element.type()) {
    case simdjson::dom::element_type::STRING:
      v.kind = SqlValue::Kind::text;
      v.text = element.get_string().value_unsafe();
      break;
    case simdjson::dom::element_type::INT64:
      v.kind = SqlValue::Kind::integer;
      v.integer = element.get_int64().value_unsafe();
      break;
    case simdjson::dom::element_type::UINT64:
      v.kind = SqlValue::Kind::real;
      v.real = static_cast<double>(element.get_uint64().value_unsafe());
      break;
    case simdjson::dom::element_type::DOUBLE:
      v.kind = SqlValue::Kind::real;
      v.real = element.get_double().value_unsafe();
      break;
    case simdjson::dom::element_type::BOOL:
      v.kind = SqlValue::Kind::integer;
      v.integer = element.get_bool().value_unsafe() ? 1 : 0;
      break;
    case simdjson::dom::element_type::NULL_VALUE:
      break;
    case simdjson::dom::element_type::ARRAY:
    case simdjson::dom::element_type::OBJECT:
      v.kind = SqlValue::Kind::json;
      v.json = simdjson::minify(element);
      break;
  }
  return v;
}

SqlValue member(const simdjson::dom::object& obj, std::string_view key) {
  simdjson::dom::element element;
  if (obj[key].get(element) != simdjson::SUCCESS) {
    return {};
  }
  return sql_value(element);
}

// An integer member of an event (the obj has the members kept in columns
// written back), nullopt when it has none or another type.
std::optional<std::int64_t> integer_member(const simdjson::dom::object& obj, std::string_view key) {
  const SqlValue v = member(obj, key);
  return v.kind == SqlValue::Kind::integer ? std::optional<std::int64_t>(v.integer) : std::nullopt;
}

std::optional<std::string> as_text(const SqlValue& v) {
  switch (v.kind) {
    case SqlValue::Kind::null:
      return std::nullopt;
    case SqlValue::Kind::integer:
      return std::to_string(v.integer);
    case SqlValue::Kind::real:
      return real_text(v.real);
    case SqlValue::Kind::text:
    case SqlValue::Kind::json:
      return std::string(v.str());
  }
  return std::nullopt;
}

std::string text_or_empty(const SqlValue& v) {
  return as_text(v).value_or(std::string());
}

// sqlite3_column_double() of the value (text: its leading number, or 0).
std::optional<double> as_double(const SqlValue& v) {
  switch (v.kind) {
    case SqlValue::Kind::null:
      return std::nullopt;
    case SqlValue::Kind::integer:
      return static_cast<double>(v.integer);
    case SqlValue::Kind::real:
      return v.real;
    case SqlValue::Kind::text:
    case SqlValue::Kind::json:
      return std::strtod(std::string(v.str()).c_str(), nullptr);
  }
  return std::nullopt;
}

std::string sql_json(const SqlValue& v) {
  switch (v.kind) {
    case SqlValue::Kind::null:
      return "null";
    case SqlValue::Kind::integer:
      return std::to_string(v.integer);
    case SqlValue::Kind::real:
      return real_text(v.real);
    case SqlValue::Kind::json:
      return v.json;
    case SqlValue::Kind::text:
      break;
  }
  std::string out;
  db::append_sqlite_json_quoted(out, v.text);
  return out;
}

}  // namespace trace2d::model::loading
