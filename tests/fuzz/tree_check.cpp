#include "tests/fuzz/tree_check.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/process_tree.hpp"
#include "model/tree_filter.hpp"
#include "model/tree_loader.hpp"
#include "ctl/render/chrome_trace.hpp"
#include "ctl/render/flame_layout.hpp"
#include "ctl/render/html_report.hpp"
#include "ctl/render/tree_json.hpp"
#include "ctl/render/tree_text.hpp"
#include "proto/utf8.hpp"
#include "tests/fuzz/strict_json.hpp"

namespace trace2d::fuzz {
namespace {

namespace render = ctl::render;

void check(bool condition, const std::string& what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_stitcher: invariant broken: %s\n", what.c_str());
    std::abort();
  }
}

// Two JSON containers per tree level ({"entries":[{...}]}), and some slack.
constexpr std::size_t k_json_depth = 2 * model::k_max_tree_depth + 8;

struct Counts {
  std::size_t processes = 0;
  std::size_t regions = 0;
  std::size_t children = 0;
  std::size_t depth = 0;  // levels below the top, deepest
};

void count(const std::vector<model::Node>& nodes, std::size_t level, Counts& counts) {
  for (const model::Node& node : nodes) {
    counts.processes += node.process() != nullptr ? 1 : 0;
    counts.regions += node.region() != nullptr ? 1 : 0;
    counts.children += node.child() != nullptr ? 1 : 0;
    counts.depth = std::max(counts.depth, level + 1);
    count(node.children, level + 1, counts);
  }
}

void check_text(const model::ProcessTree& tree, const std::string& root) {
  for (const bool times : {true, false}) {
    std::ostringstream out;
    render::print_tree_text(out, tree, {times, true});
    const std::string text = out.str();
    check(proto::is_valid_utf8(text), "tree text is valid UTF-8: " + root);
    std::size_t lines = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text[i]);
      lines += byte == '\n' ? 1 : 0;
      check(byte == '\n' || (byte >= 0x20 && byte != 0x7F), "tree text has no C0 control or DEL: " + root);
      check(!(byte == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
              static_cast<unsigned char>(text[i + 1]) <= 0x9F),
            "tree text has no C1 control: " + root);
    }
    const bool one_session = tree.processes.size() == 1 && tree.processes.front().process() != nullptr &&
                             tree.processes.front().process()->sid == tree.root;
    const std::size_t expected = model::count_nodes(tree) + (times ? 2 : 0) + (one_session ? 0 : 1);
    check(lines == expected, "tree text is one line per node: " + std::to_string(lines) + " lines, " +
                                 std::to_string(expected) + " expected, for " + root);
  }
}

void check_renderings(const model::ProcessTree& tree, const std::string& root) {
  check_text(tree, root);
  std::string json;
  render::append_tree_json(json, tree);
  check(StrictJson::is_valid(json, k_json_depth), "tree JSON is valid JSON: " + root + "\n" + json);

  const render::FlameLayout layout = render::layout_flame(tree);
  for (const render::Bar& bar : layout.bars) {
    check(std::isfinite(bar.start) && std::isfinite(bar.end) && bar.start <= bar.end,
          "flame bar is finite and starts before it ends: " + root);
    check(bar.row >= 0 && bar.row < layout.rows, "flame bar sits on a row: " + root);
  }
  check(std::isfinite(layout.span), "flame span is finite: " + root);

  render::HtmlReport report;
  report.trees.push_back(tree);
  std::string html;
  render::append_html_report(html, report);
  check(html.find("could not be drawn") == std::string::npos, "report draws the tree: " + root);
}

void check_tree(db::Database& db, const std::string& root) {
  model::LoadOptions load;
  load.annotations = true;
  std::vector<model::ProcessRows> rows = model::load_process_rows(db, root, load);
  check(!rows.empty(), "a session's SID or prefix loads its tree: " + root);
  Counts loaded;
  loaded.processes = rows.size();
  for (const model::ProcessRows& r : rows) {
    loaded.regions += r.regions.size();
    loaded.children += r.children.size();
  }
  try {
    const model::ProcessTree full = model::build_process_tree(root, rows);
    Counts built;
    count(full.processes, 0, built);
    check(built.depth <= model::k_max_tree_depth, "tree depth within the limit: " + root);
    check(built.regions == loaded.regions && built.children == loaded.children,
          "every region and child_start is in the tree: " + root);
    // Only a tree cut at the depth limit leaves processes unexpanded.
    check(built.depth == model::k_max_tree_depth ? built.processes <= loaded.processes
                                                     : built.processes == loaded.processes,
          "every session is in the tree, once: " + std::to_string(built.processes) + " of " +
              std::to_string(loaded.processes) + " under " + root);
    check_renderings(full, root);
    std::string trace;
    render::append_chrome_trace(trace, full);
    check(StrictJson::is_valid(trace), "Chrome trace is valid JSON: " + root + "\n" + trace);

    model::ProcessTree shallow = model::build_process_tree(root, rows, {1});
    model::filter_tree(shallow, {0.001, 1});
    check_renderings(shallow, root);
  } catch (const std::exception& e) {
    check(false, "building or rendering the tree of " + root + " threw: " + e.what());
  }
}

}  // namespace

void check_process_trees(db::Database& db) {
  std::set<std::string> roots;
  db::Statement sids = db.prepare("SELECT sid FROM sessions");
  while (sids.step()) {
    const std::string sid(sids.column_blob(0));
    if (sid.empty()) {
      continue;
    }
    roots.insert(sid);
    // Every prefix ending at a '/' (a GIT_TRACE2_PARENT_SID), as `tree`
    // takes it after normalise_root().
    for (std::size_t slash = sid.find('/'); slash != std::string::npos; slash = sid.find('/', slash + 1)) {
      const std::string prefix = model::normalise_root(sid.substr(0, slash));
      if (!prefix.empty() && prefix != "/") {
        roots.insert(prefix);
      }
    }
  }
  for (const std::string& root : roots) {
    check_tree(db, root);
  }
}

}  // namespace trace2d::fuzz
