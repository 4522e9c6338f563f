#include "model/tree_filter.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace trace2d::model {
namespace {

std::vector<Node> limit_regions(std::vector<Node> nodes, int level, int max_level) {
  std::vector<Node> out;
  bool hoisted = false;
  for (Node& node : nodes) {
    if (node.region() == nullptr) {
      // A thread or a process starts its own stack of regions.
      node.children = limit_regions(std::move(node.children), 0, max_level);
      out.push_back(std::move(node));
    } else if (level >= max_level) {
      std::vector<Node> kept = limit_regions(std::move(node.children), level + 1, max_level);
      std::move(kept.begin(), kept.end(), std::back_inserter(out));
      hoisted = true;
    } else {
      node.children = limit_regions(std::move(node.children), level + 1, max_level);
      out.push_back(std::move(node));
    }
  }
  if (hoisted) {
    sort_siblings(out);
  }
  return out;
}

// Deepest first, so a node is judged by its own length once all it held
// has gone.
void drop_short(std::vector<Node>& nodes, double min_seconds) {
  for (Node& node : nodes) {
    drop_short(node.children, min_seconds);
  }
  std::erase_if(nodes, [&](const Node& node) {
    return node.children.empty() && node.elapsed && *node.elapsed < min_seconds;
  });
}

std::size_t count(const std::vector<Node>& nodes) {
  std::size_t n = nodes.size();
  for (const Node& node : nodes) {
    n += count(node.children);
  }
  return n;
}

}  // namespace

void filter_tree(ProcessTree& tree, const FilterOptions& options) {
  for (Node& process : tree.processes) {
    if (options.max_region_depth) {
      process.children = limit_regions(std::move(process.children), 0, *options.max_region_depth);
    }
    if (options.min_seconds) {
      drop_short(process.children, *options.min_seconds);
    }
  }
}

std::size_t count_nodes(const ProcessTree& tree) { return count(tree.processes); }

}  // namespace trace2d::model
