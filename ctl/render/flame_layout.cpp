#include "ctl/render/flame_layout.hpp"

#include <algorithm>

#include "ctl/render/describe.hpp"

namespace trace2d::ctl::render {
namespace {

struct Interval {
  double start;
  double end;
};

class FlameBuilder {
 public:
  FlameLayout build(const analysis::ProcessTree& tree) {
    for (const analysis::Node& process : tree.processes) {
      place(process, -1, std::nullopt);
    }
    m_layout.rows = static_cast<int>(m_rows.size());
    return std::move(m_layout);
  }

 private:
  void place(const analysis::Node& node, int parent_row, std::optional<Interval> parent) {
    if (!node.offset) {
      m_layout.untimed += 1;
      for (const analysis::Node& child : node.children) {
        place(child, parent_row, parent);
      }
      return;
    }
    Bar bar;
    bar.start = *node.offset;
    if (node.elapsed) {
      bar.end = *node.offset + *node.elapsed;
    } else {
      // Never closed: it lasted as long as what holds it, as far as we know.
      bar.open = true;
      bar.end = parent ? parent->end : latest_end(node, bar.start);
    }
    bar.end = std::max(bar.end, bar.start);
    describe(node, bar);
    bar.row = free_row(parent_row + 1, {bar.start, bar.end});
    m_rows[static_cast<std::size_t>(bar.row)].push_back({bar.start, bar.end});
    m_layout.span = std::max(m_layout.span, bar.end);
    const int row = bar.row;
    const Interval self{bar.start, bar.end};
    m_layout.bars.push_back(std::move(bar));
    for (const analysis::Node& child : node.children) {
      place(child, row, self);
    }
  }

  int free_row(int from, const Interval& interval) {
    for (auto row = static_cast<std::size_t>(from);; ++row) {
      if (row >= m_rows.size()) {
        m_rows.resize(row + 1);
        return static_cast<int>(row);
      }
      const bool overlaps = std::any_of(m_rows[row].begin(), m_rows[row].end(), [&](const Interval& used) {
        return interval.start < used.end && used.start < interval.end;
      });
      if (!overlaps) {
        return static_cast<int>(row);
      }
    }
  }

  static double latest_end(const analysis::Node& node, double floor) {
    double end = floor;
    for (const analysis::Node& child : node.children) {
      end = std::max({end, child.end().value_or(floor), latest_end(child, floor)});
    }
    return end;
  }

  static void describe(const analysis::Node& node, Bar& bar) {
    const std::string times = "start " + format_ms(node.offset) + " ms, " +
                              (node.elapsed ? format_ms(node.elapsed) + " ms" : std::string("never closed"));
    if (const auto* process = node.process()) {
      bar.kind = BarKind::process;
      bar.label = process_name(*process);
      bar.tooltip = process_name(*process) + " [" + process_outcome(*process) + "]\n" + join_argv(process->argv) +
                    "\n" + times + "\nsid " + process->sid;
    } else if (const auto* region = node.region()) {
      bar.kind = BarKind::region;
      bar.category = region->category;
      bar.label = region->label;
      bar.tooltip = region_name(*region) + (region->msg.empty() ? "" : " " + region->msg) + "\n" + times +
                    (region->thread == "main" ? "" : "\nthread " + region->thread);
    } else if (const auto* child = node.child()) {
      bar.kind = BarKind::child;
      const std::string command = join_argv(child->argv, child->use_shell);
      bar.label = command;
      bar.tooltip = child_name(*child) + ": " + command + "\n[" + child_outcome(*child) + "]\n" + times;
    } else if (const auto* thread = node.thread()) {
      bar.kind = BarKind::thread;
      bar.label = "thread " + thread->name;
      bar.tooltip = bar.label + "\n" + times;
    }
  }

  FlameLayout m_layout;
  std::vector<std::vector<Interval>> m_rows;
};

}  // namespace

FlameLayout layout_flame(const analysis::ProcessTree& tree) { return FlameBuilder().build(tree); }

}  // namespace trace2d::ctl::render
