#pragma once
// Short SIDs, as git abbreviates object names. A SID is "parent/…/own",
// its own part made by git from a time and a host hash ("20261122T000429.
// 517133Z-H0a7c9cdf-P000014ca"); nested ones run past 130 characters. The
// short SID is the shortest prefix of the own part (at least
// k_min_short_sid characters) that no other session's own part starts
// with; `show`, `tree` and `export` accept it in place of the SID.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "db/sqlite.hpp"

namespace trace2d::ctl {

inline constexpr std::size_t k_min_short_sid = 8;

// The part after the last '/'.
[[nodiscard]] std::string_view own_part(std::string_view sid);

// Abbreviates SIDs against every session in the database (read once, at
// construction).
class SidAbbreviator {
 public:
  explicit SidAbbreviator(db::Database& db);
  // The short form of `sid`; the whole SID when its own part is also
  // another session's (custom SIDs can repeat under different parents).
  [[nodiscard]] std::string shorten(std::string_view sid) const;

 private:
  std::vector<std::string> m_own_parts;  // sorted
};

// Whether a SID prefix that sessions hang under ("ci-job 42" for
// "ci-job 42/…") names them all, as `tree` takes it.
enum class PrefixRoot { refuse, allow };

// The SID that `text` names: a SID, or a short SID that begins exactly one
// session's own part; with PrefixRoot::allow, also such a prefix, returned
// as it is. Throws std::runtime_error for none or several.
[[nodiscard]] std::string resolve_sid(db::Database& db, const std::string& text,
                                      PrefixRoot prefix_root = PrefixRoot::refuse);

// What `--last` names: the latest-started top of a process tree (a session
// with no parent session of its owner in the database, or re-rooted for
// ownership); with `cmds`, the latest session of one of those commands
// (display name or cmd_name), top-level or not, so that `tree --last --cmd
// fetch` finds a fetch a script ran. Throws std::runtime_error for none.
[[nodiscard]] std::string latest_sid(db::Database& db, const std::vector<std::string>& cmds);

}  // namespace trace2d::ctl
