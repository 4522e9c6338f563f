#pragma once
// Whose a session is: the uid that sent it (`sessions.peer_uid`, from the
// kernel), shown by name so that a look-alike session of another user
// cannot pass for root's. Sessions from `trace2d import` belong to no one
// (their uid is the imported file's owner, not who ran git): `-`.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ctl/query/analysis_queries.hpp"

namespace trace2d::ctl {

// Select-list items for the owner of the session aliased `alias`: an
// `owner` column holding the uid (NULL for imports), and before it, for
// machine formats (Units::seconds), `peer_uid` as stored.
[[nodiscard]] std::string owner_columns(std::string_view alias, Units units);

// User names from the password database (getpwuid_r), each uid looked up
// once.
class UserNames {
 public:
  // The user's name, or nullopt when the uid has no entry.
  [[nodiscard]] std::optional<std::string> name_of(std::int64_t uid);

  // What a table shows: the name when it names this uid alone; otherwise
  // (no entry, a name of digits only that would read as another uid, or a
  // name that getpwnam_r resolves to another uid) the number.
  [[nodiscard]] std::string label_of(std::int64_t uid);

 private:
  std::map<std::int64_t, std::optional<std::string>> m_names;
};

}  // namespace trace2d::ctl
