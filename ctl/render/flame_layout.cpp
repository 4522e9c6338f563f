#include "ctl/render/flame_layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "ctl/render/describe.hpp"

namespace trace2d::ctl::render {
namespace {

// Rows tried for a bar before it is drawn over others (see free_row).
constexpr std::size_t k_max_rows_searched = 512;

struct Interval {
  double start;
  double end;
};

class FlameBuilder {
 public:
  explicit FlameBuilder(std::size_t max_bars) : m_max_bars(max_bars) {}

  FlameLayout build(const model::ProcessTree& tree) {
    for (const model::Node& process : tree.processes) {
      place(process, -1, std::nullopt);
    }
    m_layout.rows = static_cast<int>(m_rows.size());
    return std::move(m_layout);
  }

 private:
  // `process_ended`: whether the process `node` belongs to has ended (a
  // process node says it of itself).
  void place(const model::Node& node, int parent_row, std::optional<Interval> parent, bool process_ended = false) {
    const bool ended = node.process() != nullptr ? node.process()->status != "running" : process_ended;
    if (m_layout.bars.size() >= m_max_bars) {
      m_layout.folded += 1 + count_below(node);
      return;
    }
    // A time that is no number (a stored 1e308 plus another) cannot be drawn.
    if (!node.offset || !std::isfinite(*node.offset) || (node.elapsed && !std::isfinite(*node.end()))) {
      m_layout.untimed += 1;
      for (const model::Node& child : node.children) {
        place(child, parent_row, parent, ended);
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
    describe(node, ended, bar);
    bar.row = free_row(parent_row + 1, {bar.start, bar.end});
    m_rows[static_cast<std::size_t>(bar.row)].insert({bar.start, bar.end});
    m_layout.span = std::max(m_layout.span, bar.end);
    const int row = bar.row;
    const Interval self{bar.start, bar.end};
    m_layout.bars.push_back(std::move(bar));
    for (const model::Node& child : node.children) {
      place(child, row, self, ended);
    }
  }

  // The first row from `from` on where `interval` overlaps nothing. At most
  // k_max_rows_searched rows are tried: past that (thousands of child
  // processes running at once: hostile data), the bar goes on row `from`
  // over the others, instead of costing time quadratic in the bars.
  int free_row(int from, const Interval& interval) {
    const auto first = static_cast<std::size_t>(from);
    for (std::size_t row = first; row < first + k_max_rows_searched; ++row) {
      if (row >= m_rows.size()) {
        m_rows.resize(row + 1);
        return static_cast<int>(row);
      }
      if (!overlaps(m_rows[row], interval)) {
        return static_cast<int>(row);
      }
    }
    return from;
  }

  // A row's intervals never overlap one another, so ordered by (start, end)
  // their ends never decrease: only the last one starting before
  // `interval` ends can reach into it.
  static bool overlaps(const std::set<std::pair<double, double>>& row, const Interval& interval) {
    auto after = row.lower_bound({interval.end, -std::numeric_limits<double>::infinity()});
    if (after == row.begin()) {
      return false;
    }
    --after;
    return interval.start < after->second && after->first < interval.end;
  }

  static std::size_t count_below(const model::Node& node) {
    std::size_t count = node.children.size();
    for (const model::Node& child : node.children) {
      count += count_below(child);
    }
    return count;
  }

  static double latest_end(const model::Node& node, double floor) {
    double end = floor;
    for (const model::Node& child : node.children) {
      end = std::max({end, child.end().value_or(floor), latest_end(child, floor)});
    }
    return end;
  }

  static void describe(const model::Node& node, bool process_ended, Bar& bar) {
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
      bar.tooltip = child_name(*child) + ": " + command + "\n[" + child_outcome(*child, process_ended) + "]\n" + times;
    } else if (const auto* exec = node.exec()) {
      bar.kind = BarKind::child;  // drawn as a child process: another program, run for this one
      const std::string command = join_argv(exec->argv);
      bar.label = command;
      bar.tooltip = exec_name(*exec) + ": " + command + "\n[" + exec_outcome(*exec) + "]\n" + times;
    } else if (const auto* thread = node.thread()) {
      bar.kind = BarKind::thread;
      bar.label = "thread " + thread->name;
      bar.tooltip = bar.label + "\n" + times;
    }
  }

  std::size_t m_max_bars;
  FlameLayout m_layout;
  std::vector<std::set<std::pair<double, double>>> m_rows;  // (start, end) of the bars on each row
};

}  // namespace

FlameLayout layout_flame(const model::ProcessTree& tree, std::size_t max_bars) {
  return FlameBuilder(max_bars).build(tree);
}

}  // namespace trace2d::ctl::render
