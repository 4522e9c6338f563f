#pragma once
// An event's members as the documented views give them to SQL, read from
// the event's JSON with simdjson: the full loader's events must say what
// the views say. Internal to model/.

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trace2d::model::loading {

// A member of an event as the views' json_extract() gives it to SQL
// (SQLite 3.40): true and false are the integers 1 and 0, an integer too
// large for 64 bits is a real, arrays and objects are their JSON text, and
// a missing member or null is NULL. The loader reads events with simdjson
// but must give what the documented views give.
struct SqlValue {
  enum class Kind : std::uint8_t { null, integer, real, text, json };
  Kind kind = Kind::null;
  std::int64_t integer = 0;
  double real = 0;
  std::string_view text;  // the string, unescaped (valid while its event is parsed)
  std::string json;       // an array's or object's text

  [[nodiscard]] std::string_view str() const { return kind == Kind::json ? std::string_view(json) : text; }
};

[[nodiscard]] SqlValue sql_value(simdjson::dom::element element);
// A member (a missing one: null).
[[nodiscard]] SqlValue member(const simdjson::dom::object& obj, std::string_view key);
// An integer member of an event (the obj has the members kept in columns
// written back), nullopt when it has none or another type.
std::optional<std::int64_t> integer_member(const simdjson::dom::object& obj, std::string_view key);
// sqlite3_column_text() of the value; nullopt for NULL.
[[nodiscard]] std::optional<std::string> as_text(const SqlValue& v);
[[nodiscard]] std::string text_or_empty(const SqlValue& v);
// sqlite3_column_double() of the value (text: its leading number, or 0).
[[nodiscard]] std::optional<double> as_double(const SqlValue& v);
// SQLite's json_quote() (and json_object()'s members): a string quoted its
// way (\b \t \n \f \r and \u00xx for other control characters; bytes as
// they are), JSON text as it is.
[[nodiscard]] std::string sql_json(const SqlValue& v);
// The value if it is JSON, else the text as a JSON string: a counter's
// "count" is whatever the line held ("oops" for one), and the Chrome trace
// embeds the value as it is.
[[nodiscard]] std::string as_json(std::string_view text, simdjson::dom::parser& parser);

}  // namespace trace2d::model::loading
