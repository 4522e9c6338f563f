#pragma once
// An event's members as the documented views give them to SQL, read from
// the event's JSON with simdjson: the full loader's events must say what
// the views say. Internal to model/.

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "db/event_codec.hpp"

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
// One stored event's members as the event_parts view's `obj` gives them,
// without that object rebuilt and parsed: the leading members from their
// columns (db/event_codec.hpp), the others from the body parsed alone.
// Rebuilding and parsing the whole object cost the export's loading 5% of
// its instructions, and refused a whole event whose category's name was
// not UTF-8, which the views give.
class StoredEventMembers {
 public:
  // Parses the event of event_store's `body` and leading `columns` with
  // `parser`, in `scratch`; false when the view's obj would not be JSON
  // (nothing of the event is then read). `names` gives the names' texts;
  // it and `scratch` must outlive the values read.
  [[nodiscard]] bool parse(std::string_view body, const db::LeadingColumns& columns, db::NameTexts& names,
                           simdjson::dom::parser& parser, std::string& scratch);

  // A member (a missing one: null), as member() of the view's obj gives it.
  [[nodiscard]] SqlValue operator[](std::string_view key) const;
  // An integer member, nullopt when there is none or it has another type.
  [[nodiscard]] std::optional<std::int64_t> integer(std::string_view key) const;
  // The members not kept in columns (argv, exec_id, ...).
  [[nodiscard]] const simdjson::dom::object& rest() const { return m_rest; }

 private:
  simdjson::dom::object m_rest;
  db::LeadingColumns m_columns{};
  db::NameTexts* m_names = nullptr;
};

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
