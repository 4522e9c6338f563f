#pragma once
// Lays a process tree out as a flame chart: one bar per node, time along x,
// nesting down y. A node goes on the first row below its parent where it
// overlaps nothing, so a child process that outlives the region that
// started it (git fetch's upload-pack) pushes later bars down instead of
// hiding them.

#include <cstdint>
#include <string>
#include <vector>

#include "model/process_tree.hpp"

namespace trace2d::ctl::render {

enum class BarKind { process, region, child, thread };

struct Bar {
  BarKind kind = BarKind::region;
  double start = 0;  // seconds since the tree's origin
  double end = 0;
  int row = 0;
  std::string label;     // drawn on the bar when it fits
  std::string tooltip;   // what <title> shows: name, times, details
  std::string category;  // regions: colours by category
  bool open = false;     // never closed: drawn to its parent's end
};

struct FlameLayout {
  std::vector<Bar> bars;
  double span = 0;  // seconds from the origin to the last end
  int rows = 0;
  std::size_t untimed = 0;  // nodes without times, not drawn
  std::size_t folded = 0;   // nodes past max_bars, not drawn
};

// A chart draws at most this many bars, its nodes in tree order (each
// process with what it holds, in time order): a session with 150,000
// children made a page of 68 MB that no browser draws.
inline constexpr std::size_t k_max_flame_bars = 5000;

[[nodiscard]] FlameLayout layout_flame(const model::ProcessTree& tree, std::size_t max_bars = k_max_flame_bars);

}  // namespace trace2d::ctl::render
