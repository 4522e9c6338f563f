#pragma once
// The stored form of an event (event_store since schema v15), read back:
// the members git writes first in most events (repo, t_abs, t_rel,
// nesting, category, label) are kept in columns and left out of `body`,
// which holds the rest, each member with its leading comma; an event not
// in git's canonical layout keeps its whole text in `body` (it starts with
// '{'). The store writes this form (daemon/store/event_encoder.cpp); the
// event_parts view and the code here give the event back, the same way.
// The ids of the event kinds are in event_types.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trace2d::db {

struct StoredEventParts {
  std::string_view body;  // event_store.body
  std::optional<std::int64_t> repo;
  std::optional<std::int64_t> t_abs_us;  // microseconds
  std::optional<std::int64_t> t_rel_us;
  std::optional<std::int64_t> nesting;
  // The texts of the category's and the label's names; nullopt when the
  // event has none, or its id names nothing (left out then).
  std::optional<std::string_view> category;
  std::optional<std::string_view> label;
};

// The event's members as one JSON object, as the event_parts view's `obj`
// gives it: the body as it is when it holds the whole event, else the
// leading members (times as printf('%d.%06d'), names as json_quote()) and
// the rest, in braces.
void append_stored_event_object(std::string& out, const StoredEventParts& parts);

// SQLite's json_quote() of a text: \" \\ \b \t \n \f \r, \u00xx for the
// other control characters, every other byte as it is.
void append_sqlite_json_quoted(std::string& out, std::string_view text);

}  // namespace trace2d::db
