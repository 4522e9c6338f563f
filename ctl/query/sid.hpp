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

// Abbreviates SIDs against every session in the database. For the rows of
// a page, each SID's neighbours are found through the indexes (the nearest
// top-level SIDs in SID order; the processes started within a second of it,
// whose own parts begin with a time as git writes them), so the cost does
// not grow with the database; past k_bulk_sids SIDs, every SID is read once.
// A custom or forged own part that does not follow git's layout may go
// unseen and make a short SID ambiguous: resolve_sid() then says so.
class SidAbbreviator {
 public:
  SidAbbreviator(db::Database& db, const std::vector<std::string>& sids);
  SidAbbreviator(const SidAbbreviator&) = delete;  // m_own points into m_sids
  SidAbbreviator& operator=(const SidAbbreviator&) = delete;
  // The short form of `sid` (one of those given); the whole SID when its
  // own part is also another session's (custom SIDs can repeat under
  // different parents).
  [[nodiscard]] std::string shorten(std::string_view sid) const;

  static constexpr std::size_t k_bulk_sids = 1000;

 private:
  void add_neighbours(db::Database& db, std::string_view sid);
  std::vector<std::string> m_sids;       // every SID looked at (bulk: all)
  std::vector<std::string_view> m_own;   // their own parts, sorted
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
