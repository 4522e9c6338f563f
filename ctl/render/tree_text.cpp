#include "ctl/render/tree_text.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "ctl/output/table.hpp"
#include "ctl/render/describe.hpp"
#include "ctl/render/node_failure.hpp"

namespace trace2d::ctl::render {
namespace {

constexpr const char* k_middle = "├─ ";
constexpr const char* k_last = "└─ ";

// Under its child_start the child line shows the command already
// ("child 1: git maintenance run --auto" above "maintenance"); repeating it
// is noise, and so under the exec it replaced. Not so for a git that the
// child did not run itself but that ran while it did, such as a hook
// script's `git rev-parse` (placed_by "child_window"): the child line shows
// the script, the git argv is news.
bool shown_by_parent(const model::ProcessInfo& process, const model::Node* parent) {
  return parent != nullptr && ((parent->child() != nullptr && process.placed_by == "child_sid") ||
                               (parent->exec() != nullptr && process.placed_by == "exec"));
}

struct Line {
  std::string start;
  std::string elapsed;
  std::string text;
  bool red = false;
};

class TreeLines {
 public:
  explicit TreeLines(const TreeTextOptions& options) : m_options(options) {}

  // `parent`: the node this one hangs under, if any; `process_ended`:
  // whether the process it belongs to has ended (a process node says it
  // of itself).
  void add(const model::Node& node, const std::string& lead, const std::string& connector, const model::Node* parent,
           bool process_ended = false) {
    const bool with_argv = node.process() != nullptr && !shown_by_parent(*node.process(), parent);
    const bool ended = node.process() != nullptr ? node.process()->status != "running" : process_ended;
    std::string label = node_label(node, with_argv, m_options.sids, ended);
    // Why it failed, beside it.
    if (const std::string reason = failure_reason(node); !reason.empty()) {
      label += "  (" + reason + ")";
    }
    m_lines.push_back({format_ms(node.offset), format_ms(node.elapsed),
                       lead + connector + escape_for_terminal(label), m_options.colour && failed(node)});
    const std::string next_lead = lead + (connector.empty() ? "" : (connector == k_last ? "   " : "│  "));
    if (const auto* process = node.process(); process != nullptr && process->events_left_out > 0) {
      // What the tree shows of a huge session is its first events: said at
      // its top, with how to see the rest (docs/reports.md).
      m_lines.push_back({{}, {}, next_lead + "(" + std::to_string(process->events_left_out) +
                                     " later events not read: --max-events 0 reads them all; "
                                     "trace2ctl show lists every event)",
                         false});
    }
    for (std::size_t i = 0; i < node.children.size(); ++i) {
      const bool last = i + 1 == node.children.size();
      add(node.children[i], next_lead, last ? k_last : k_middle, &node, ended);
    }
  }

  void add_root(const std::string& text) { m_lines.push_back({{}, {}, text, false}); }

  void print(std::ostream& out) const {
    std::size_t start_width = std::string("start_ms").size();
    std::size_t elapsed_width = std::string("elapsed_ms").size();
    for (const Line& line : m_lines) {
      start_width = std::max(start_width, line.start.size());
      elapsed_width = std::max(elapsed_width, line.elapsed.size());
    }
    const auto pad = [](const std::string& text, std::size_t width) {
      return std::string(width - std::min(width, text.size()), ' ') + text;
    };
    std::string text;
    if (m_options.times) {
      text += pad("start_ms", start_width) + "  " + pad("elapsed_ms", elapsed_width) + "  tree\n";
      text += std::string(start_width, '-') + "  " + std::string(elapsed_width, '-') + "  ----\n";
    }
    for (const Line& line : m_lines) {
      if (m_options.times) {
        text += pad(line.start, start_width) + "  " + pad(line.elapsed, elapsed_width) + "  ";
      }
      if (line.red) {
        text += std::string(k_red) + line.text + std::string(k_normal) + "\n";
      } else {
        text += line.text + "\n";
      }
    }
    out << text;
  }

 private:
  TreeTextOptions m_options;
  std::vector<Line> m_lines;
};

}  // namespace

void print_tree_text(std::ostream& out, const model::ProcessTree& tree, const TreeTextOptions& options) {
  TreeLines lines(options);
  const bool one_session = tree.processes.size() == 1 && tree.processes.front().process() != nullptr &&
                           tree.processes.front().process()->sid == tree.root;
  if (one_session) {
    lines.add(tree.processes.front(), "", "", nullptr);
  } else {
    // A prefix without a session of its own: its sessions hang under it.
    lines.add_root(escape_for_terminal(tree.root) + "  [" + std::to_string(tree.processes.size()) +
                   (tree.processes.size() == 1 ? " process" : " processes") + " under this SID prefix]");
    for (std::size_t i = 0; i < tree.processes.size(); ++i) {
      lines.add(tree.processes[i], "", i + 1 == tree.processes.size() ? k_last : k_middle, nullptr);
    }
  }
  lines.print(out);
}

}  // namespace trace2d::ctl::render
