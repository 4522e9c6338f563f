#pragma once
// Pairs one session's region_enter and region_leave events, per thread.
//
// git sends them in stack order, but the nesting filter drops deeper
// regions (so levels can skip), a leave can come without its enter (after
// a restart, or from a sloppy producer), and threads interleave. A leave
// closes the innermost open region with the same category, label and
// nesting; regions above it stay unclosed. A region is written when it
// closes, or when a batch is handed on while it is still open (then once
// more when it closes).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/stitch/session_record.hpp"

namespace trace2d::stitch {

class RegionPairer {
 public:
  // `record` holds the enter's fields; its parent is set here.
  void enter(RegionRecord record);
  // `leave` holds the leave's fields (seq, elapsed, t_start if known, `at`);
  // without an elapsed (no t_rel), the time from the enter's `at` is used.
  void leave(RegionRecord leave, std::vector<RegionRecord>& out);
  // Open regions not written yet, as they are now (no elapsed).
  void flush_open(std::vector<RegionRecord>& out);
  [[nodiscard]] bool has_unwritten() const { return m_unwritten > 0; }

 private:
  struct Open {
    RegionRecord record;
    bool written = false;
  };
  std::map<std::string, std::vector<Open>> m_stacks;  // by thread name
  std::size_t m_unwritten = 0;
};

}  // namespace trace2d::stitch
