#pragma once
// Pairs one session's region_enter and region_leave events, per thread.
//
// git sends them in stack order, but the nesting filter drops deeper
// regions (so levels can skip), a leave can come without its enter (after
// a restart, or from a sloppy producer), and threads interleave. A leave
// closes the innermost open region with the same category, label and
// nesting. Regions above it stay open, left behind: the client library's
// guards close their own region out of order and the ones above are left
// later; an enter at nesting n closes (as unclosed) those left behind that
// its sender no longer counts, above its n - 1 open regions, as after a
// lost line of git's. A region is written when it closes, or when a batch
// is handed on while it is still open (then once more when it closes).
//
// Anyone can send events, so what a session may keep open is bounded: a
// thread's stack holds at most `k_max_depth` regions and the session at most
// `k_max_open` in all. An enter beyond either is written at once as an
// unclosed region (its leave then stands alone), so the cost of an event
// never grows with what was sent before. So is one the caller has no room
// for (its sender's live sessions hold their bound: live_memory.hpp); what
// the open regions hold is held_bytes().

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "daemon/stitch/session_record.hpp"

namespace trace2d::stitch {

class RegionPairer {
 public:
  // git's deepest stacks are a few levels (its nesting filter defaults to 2);
  // a threaded command holds one or two per thread.
  static constexpr std::size_t k_max_depth = 64;
  static constexpr std::size_t k_max_open = 512;

  // Whether the caller can afford to hold one more region open.
  enum class Room : bool { none, some };

  // `record` holds the enter's fields; its parent is set here. Written to
  // `out` at once when the bounds above are reached, or without room.
  void enter(RegionRecord record, std::vector<RegionRecord>& out, Room room = Room::some);
  // `leave` holds the leave's fields (seq, elapsed, t_start if known, `at`);
  // without an elapsed (no t_rel), the time from the enter's `at` is used.
  void leave(RegionRecord leave, std::vector<RegionRecord>& out);
  // Open regions not written yet, as they are now (no elapsed).
  void flush_open(std::vector<RegionRecord>& out);
  [[nodiscard]] bool has_unwritten() const { return m_unwritten > 0; }
  [[nodiscard]] std::size_t open_regions() const { return m_open; }
  // What the open regions hold: their text and a fixed cost per region.
  [[nodiscard]] std::size_t held_bytes() const { return m_held_bytes; }
  // What holding `record` open would add to held_bytes().
  [[nodiscard]] static std::size_t held_cost(const RegionRecord& record);

 private:
  struct Open {
    RegionRecord record;
    std::size_t cost = 0;  // as charged to m_held_bytes when opened
    bool written = false;
    bool behind = false;  // above a region its sender left out of order
  };
  // Takes an open region off the books, written unclosed unless it was.
  void write_unclosed(Open& open, std::vector<RegionRecord>& out);
  // By thread name; a thread's entry goes when its stack empties.
  std::unordered_map<std::string, std::vector<Open>> m_stacks;
  std::size_t m_open = 0;
  std::size_t m_unwritten = 0;
  std::size_t m_held_bytes = 0;
};

}  // namespace trace2d::stitch
