#pragma once
// The stored form of an event (event_store since schema v15), both ways.
//
// An event in git's canonical layout is stored in pieces: its first members
// (event, sid, thread, time, file, line) in the columns of event_store that
// name them, then the "leading members" git writes next in most events
// (k_leading_members: repo, t_abs, t_rel, nesting, category, label, key)
// in columns of their own, each only when the view gives its text back
// byte for byte; `body` keeps the rest, each member with its leading comma.
// An event not in that layout keeps its whole text in `body` (it starts
// with '{'). The store encodes through this file
// (daemon/store/event_encoder.cpp); the event_parts view (db/schema.cpp)
// and append_stored_event_object give the event back, the same way. The
// ids of the event kinds are in event_types.hpp.
//
// A new leading member is a line of k_leading_members, its column and the
// event_parts view's new text in a migration (db/schema.cpp), and its row in
// docs/schema.md.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "db/sqlite.hpp"
#include "proto/event.hpp"

namespace trace2d::db {

// How a leading member's value is kept in its column.
enum class MemberValue {
  integer,       // as it is ("repo":1)
  microseconds,  // git's "%.6f" of seconds, as microseconds; written back as printf('%d.%06d')
  name,          // a string, as the id of its text in `names`; written back as json_quote()
};

struct LeadingMember {
  std::string_view key;     // the JSON member
  std::string_view column;  // its column in event_store
  MemberValue value;
};

// In the order git writes them, which is the order they are taken out and
// written back: one is taken only when it comes first in what is left.
inline constexpr std::array k_leading_members = {
    LeadingMember{"repo", "repo", MemberValue::integer},
    LeadingMember{"t_abs", "t_abs_us", MemberValue::microseconds},
    LeadingMember{"t_rel", "t_rel_us", MemberValue::microseconds},
    LeadingMember{"nesting", "nesting", MemberValue::integer},
    LeadingMember{"category", "category", MemberValue::name},
    LeadingMember{"label", "label", MemberValue::name},
    LeadingMember{"key", "key", MemberValue::name},  // data, data_json (schema v20)
};
inline constexpr int k_leading_column_count = static_cast<int>(k_leading_members.size());

// The leading members' columns of one row, in k_leading_members' order
// (nullopt: NULL, the member is in the body or absent).
using LeadingColumns = std::array<std::optional<std::int64_t>, k_leading_members.size()>;

// "repo, t_abs_us, ...", each column name after `qualifier` ("e.", or ""):
// for INSERT and SELECT lists.
[[nodiscard]] std::string leading_column_list(std::string_view qualifier);

// Writing: the id of a name's text in `names`, nullopt when it may not have
// one (the sender is over its bound): then that member, and what follows
// it, stay in the body.
class NameIds {
 public:
  virtual std::optional<std::int64_t> id(std::string_view text) = 0;

 protected:
  ~NameIds() = default;
};

// Reading: the text of a names id, nullopt when it names nothing (the
// member's value is then null, as the view's json_quote() of its LEFT
// JOIN's missing row gives it).
class NameTexts {
 public:
  virtual std::optional<std::string_view> text(std::int64_t id) = 0;

 protected:
  ~NameTexts() = default;
};

// What follows the prefix the events view rebuilds from the event's own
// columns (event, sid, thread, time when `with_time`, file, line), without
// the closing brace: "" or members each with its leading comma. nullopt
// when the line does not start with exactly that text (other order,
// spacing or escapes): it is stored whole. `scratch` is for quoting.
[[nodiscard]] std::optional<std::string_view> body_after_canonical_prefix(const proto::Event& event, bool with_time,
                                                                          std::string& scratch);

// Whether `text` is a time as format_utc_timestamp writes it (27
// characters, "...T...:SS.ffffffZ"), so that the time column gives it back.
[[nodiscard]] bool is_canonical_time_text(std::string_view text);

// Moves the leading members at the start of `body` whose text the view
// gives back byte for byte into `columns`; returns what is left.
std::string_view take_leading_members(std::string_view body, LeadingColumns& columns, NameIds& names);

void bind_leading_columns(Statement& stmt, int first_index, const LeadingColumns& columns);
[[nodiscard]] LeadingColumns read_leading_columns(const Statement& stmt, int first_column);

// A leading time member's text as the view writes it back:
// printf('%d.%06d', us / 1000000, us % 1000000).
void append_stored_micros(std::string& out, std::int64_t us);

// The event's members as one JSON object, as the event_parts view's `obj`
// gives it: `body` as it is when it holds the whole event, else the leading
// members (times as printf('%d.%06d'), names as json_quote()) and the rest,
// in braces.
void append_stored_event_object(std::string& out, std::string_view body, const LeadingColumns& columns,
                                NameTexts& names);

// SQLite's json_quote() of a text: \" \\ \b \t \n \f \r, \u00xx for the
// other control characters, every other byte as it is.
void append_sqlite_json_quoted(std::string& out, std::string_view text);

}  // namespace trace2d::db
