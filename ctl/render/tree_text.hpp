#pragma once
// `trace2ctl tree` as text: a start and an elapsed column (milliseconds,
// start measured from the tree's first process start), then the tree drawn
// with box-drawing connectors.
//
//   start_ms  elapsed_ms  tree
//   --------  ----------  ----
//      0.000      28.000  fetch  git fetch origin  [pid 5386, exit 0]
//      0.281       3.048  ├─ fetch:remote_refs
//      0.316      21.277  │  └─ child 0 transport/file: git-upload-pack ...  [shell, pid 5387, exit 0]

#include <ostream>

#include "model/process_tree.hpp"

namespace trace2d::ctl::render {

struct TreeTextOptions {
  bool times = true;  // false: no time columns (stable output to diff)
  bool sids = false;  // each process's SID after its line
  bool colour = false;  // failed processes and children in red
};

void print_tree_text(std::ostream& out, const model::ProcessTree& tree, const TreeTextOptions& options);

}  // namespace trace2d::ctl::render
