#pragma once
// Pruning a process tree for display: `tree --min-ms` and `--region-depth`,
// and the same limits in the HTML report.

#include <optional>

#include "model/process_tree.hpp"

namespace trace2d::model {

struct FilterOptions {
  // Regions, threads, children and processes shorter than this go, unless
  // they hold something that stays (a 3 ms region holding a 20 ms child
  // process stays, so the child keeps its place). Nodes of unknown length
  // (never closed) stay. The processes at the top never go.
  std::optional<double> min_seconds;
  // Region levels kept per thread (0: none). A dropped region's children,
  // threads and processes move up to the nearest region kept.
  std::optional<int> max_region_depth;
};

void filter_tree(ProcessTree& tree, const FilterOptions& options);

// Nodes in the tree, all kinds, the top-level processes included.
[[nodiscard]] std::size_t count_nodes(const ProcessTree& tree);

}  // namespace trace2d::model
